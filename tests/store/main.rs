//! The store backends: the shared conformance cases, run on SQLite and on
//! etcd, plus what only each backend can show.

#[path = "../support/mod.rs"]
mod support;

#[macro_use]
mod conformance;
mod etcd;
mod sqlite;
