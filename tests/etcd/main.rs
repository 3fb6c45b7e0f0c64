//! ringd on etcd: access control, clients, a three-member cluster losing
//! its leader, outages, watch, concurrent writers, and the client library.

#[allow(
    dead_code,
    reason = "each test binary uses a different part of tests/support"
)]
#[path = "../support/mod.rs"]
mod support;

mod access;
mod client;
mod clients;
mod cluster;
mod contention;
mod faults;
mod leader;
mod leases;
mod membership;
mod outage;
mod read_barrier;
mod rollout_events;
mod rollouts;
mod serve;
mod turns;
mod watch;
mod writers;
