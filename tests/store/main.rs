//! The store backends: the shared conformance cases, run on SQLite and on
//! etcd, plus what only each backend can show.

#[allow(
    dead_code,
    reason = "each test binary uses a different part of tests/support"
)]
#[path = "../support/mod.rs"]
mod support;

#[macro_use]
mod conformance;
mod etcd;
mod sqlite;
