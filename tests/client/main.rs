//! The Rust client library against a real server (or, for tampered
//! snapshots, a test double of one).

#[path = "../support/mod.rs"]
mod support;

mod bounded;
mod recreated;
mod sqlite;
mod tamper;
