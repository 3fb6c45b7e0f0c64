//! The Rust client library against a real server (or, for tampered
//! snapshots, a test double of one).

#[allow(
    dead_code,
    reason = "each test binary uses a different part of tests/support"
)]
#[path = "../support/mod.rs"]
mod support;

mod bounded;
mod capacity;
mod handoff;
mod health_events;
mod member;
mod recreated;
mod sqlite;
mod table;
mod tamper;
