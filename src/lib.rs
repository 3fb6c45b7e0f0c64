//! ringd: a ring-membership coordination service.
//!
//! The crate is layered so that dependencies point one way:
//! [`placement`] is the pure, deterministic core that every other part
//! (and every client, in any language) builds on. [`ring`] adds rings,
//! nodes and snapshots; [`store`] persists them; [`service`] holds the
//! rules between storage and [`api`], the REST API that [`server`] runs;
//! [`hub`] tells watchers about every version the service learns of.

#[cfg(feature = "server")]
pub mod api;
#[cfg(feature = "server")]
pub mod cli;
#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "server")]
pub mod hub;
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

/// Compiles and runs the README's Rust example as a doctest so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
