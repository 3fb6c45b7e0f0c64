//! The operator CLI end to end: the real `ringd` binary as a client of a
//! real server, its output compared with the golden files in
//! `tests/cli/expected/`.

#[allow(
    dead_code,
    reason = "each test binary uses a different part of tests/support"
)]
#[path = "../support/mod.rs"]
mod support;

mod cluster;
mod commands;
mod errors;
mod follow;
mod health;
mod node_join;
mod rollout_followers;
mod rollouts;
mod sync;
mod text;
mod watch;
