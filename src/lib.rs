//! ringd: a ring-membership coordination service.
//!
//! The crate is layered so that dependencies point one way:
//! [`placement`] is the pure, deterministic core that every other part
//! (and every client, in any language) builds on.

pub mod placement;

/// Compiles and runs the README's Rust example as a doctest so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
