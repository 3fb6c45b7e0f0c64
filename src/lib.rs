//! ringd: a ring-membership coordination service.
//!
//! The crate is layered so that dependencies point one way:
//! [`placement`] is the pure, deterministic core that every other part
//! (and every client, in any language) builds on. [`ring`] adds rings,
//! nodes and snapshots; `store` persists them; `service` holds the rules
//! between storage and `api`, the REST API that `server` runs; `hub`
//! tells watchers about every version the service learns of.
//!
//! # Layout
//!
//! From the bottom up; each module uses only modules listed before it.
//! `docs/architecture.md` has the full table of what may use what, and
//! `.ci/layers` fails CI on a path that breaks it.
//!
//! | module | holds | built by |
//! |---|---|---|
//! | `placement` | the consistent-hashing algorithms and the math on placements; pure, no I/O | always |
//! | `jitter` | random waits that spread retries and deadlines | `client` |
//! | `ring` | ring names, node records, change ops, immutable snapshots; pure | always |
//! | `wire` | the HTTP contract: every request, response and problem body | `client` |
//! | `store` | the `Store` trait and its SQLite and etcd backends | `server` |
//! | `hub` | per-ring notifications for watch streams and long-polls | `server` |
//! | `service` | `RingService`: the rules between the store and the API | `server` |
//! | `api` | the REST API: handlers, OpenAPI document, errors, tokens, metrics | `server` |
//! | `server` | the listener, connections, TLS and shutdown that run the API | `server` |
//! | `client` | the Rust client library: failover, watch, verified views, routing | `client` |
//! | `cli` | the `ringd` command line: `serve` and the operator subcommands | `server` |
//!
//! The features: `client` builds `placement`, `ring`, `wire`, `jitter`
//! and `client`, for applications (`default-features = false, features =
//! ["client"]`); `tls` adds HTTPS to the client; `server`, the default,
//! implies both and builds every module and the `ringd` binary. Without
//! any feature only `placement` and `ring` are built.

// Modules in the doc above are named, not linked: a link to a module that a
// feature leaves out breaks `cargo doc` for that build.

// Library code states its invariants with `expect`; an `unwrap` outside
// the unit tests is a missed explanation.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

#[cfg(feature = "server")]
pub mod api;
#[cfg(feature = "server")]
pub mod cli;
#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "server")]
pub mod hub;
// Shared by the server and the client (`server` implies `client`).
#[cfg(feature = "client")]
mod jitter;
pub mod placement;
pub mod ring;
#[cfg(feature = "server")]
pub mod server;
#[cfg(feature = "server")]
pub mod service;
#[cfg(feature = "server")]
pub mod store;
#[cfg(any(feature = "server", feature = "client"))]
pub mod wire;
#[cfg(feature = "server")]
pub mod xds;

/// Compiles and runs the README's Rust example as a doctest so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
