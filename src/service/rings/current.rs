//! What the cache holds of a ring: its latest version with the placement
//! built from it, and the config a change was computed against.

use std::sync::Arc;

use crate::placement::{Placement, RingConfig};
use crate::ring::{MembershipPolicy, Snapshot};

/// A version's whole config: placement and membership policy.
#[derive(Debug, Clone, PartialEq)]
pub struct BaseConfig {
    /// The placement config.
    pub config: RingConfig,
    /// The membership policy.
    pub membership: MembershipPolicy,
}

impl BaseConfig {
    /// The config of `snapshot`.
    pub fn of(snapshot: &Snapshot) -> Self {
        Self {
            config: snapshot.config.clone(),
            membership: snapshot.membership,
        }
    }
}

/// A ring's latest version with its placement, shared by readers.
#[derive(Debug)]
pub struct Current {
    /// The snapshot.
    pub snapshot: Arc<Snapshot>,
    /// Its placement.
    pub placement: Arc<Placement>,
}
