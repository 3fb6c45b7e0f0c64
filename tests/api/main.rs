//! The HTTP API end to end: a real server on a temporary SQLite store
//! (bound in this process, or a `ringd serve` child where a test kills,
//! restarts, signals it or reads its log), driven over HTTP (auth,
//! changes, errors, watch, the OpenAPI document and the server's own HTTP
//! behaviour).

#[allow(
    dead_code,
    reason = "each test binary uses a different part of tests/support"
)]
#[path = "../support/mod.rs"]
mod support;

mod ack_failures;
mod acks;
mod auth;
mod cluster;
mod config_change;
mod console_package;
mod console_serving;
mod convergence;
mod envoy_rings;
mod errors;
mod errors_input;
mod errors_text;
mod exports;
mod idempotency;
mod jump_buckets;
mod lease_restart;
mod leases;
mod long_poll;
mod lookup_bytes;
mod membership_guard;
mod membership_policy;
mod membership_policy_input;
mod nginx_rings;
mod openapi_constraints;
mod openapi_drift;
mod preconditions;
mod raced_writes;
mod rollout_events;
mod rollout_refusals;
mod rollouts;
mod serve_durations;
mod serve_tls;
mod server_http;
mod server_in_process;
mod server_limits;
mod table_rings;
mod twemproxy_rings;
mod versions;
mod walkthrough;
mod watch;
mod watch_health;
mod watch_stalled;
mod wire_examples;
mod write_timeout;
