//! The placement core: known-answer vectors, published reference results,
//! properties, inspection and errors.

mod addresses;
mod errors;
mod haproxy_vectors;
mod inspection;
mod jump_runs;
mod properties;
mod ramps;
mod reference;
mod regressions;
mod table_completion;
mod table_properties;
mod table_reference;
mod table_rules;
mod table_sequences;
mod twemproxy_hashes;
mod vector_extras;
mod vectors;
