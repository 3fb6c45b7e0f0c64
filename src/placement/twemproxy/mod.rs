//! `twemproxy`: nutcracker 0.5.0's `distribution: ketama`, with its key
//! hashes (`docs/placement-spec.md` 3.7 and 5.9).

pub mod hashes;
