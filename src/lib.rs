//! ringd: a ring-membership coordination service.
//!
//! The crate is layered so that dependencies point one way:
//! [`placement`] is the pure, deterministic core that every other part
//! (and every client, in any language) builds on.

pub mod placement;
