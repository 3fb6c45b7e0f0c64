//! A ring's clients as the service judges them: each one's latest ack
//! against the ring's current version, and the counts over them.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::placement::Fingerprint;
use crate::ring::{ClientAck, Snapshot};

/// One client's latest ack, judged against the ring's current version.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientStatus {
    /// The ack as stored.
    pub ack: ClientAck,
    /// How many versions the client is behind the ring's current version.
    pub lag: u64,
    /// Whether it applied the current version.
    pub on_latest: bool,
    /// Whether its fingerprint equals the server's for that version;
    /// `None` when the version has been pruned, so the server cannot tell.
    pub matches: Option<bool>,
    /// `matches` is false: the client computed a different placement for
    /// the same version.
    pub divergent: bool,
}

impl ClientStatus {
    pub(super) fn judge(
        ack: &ClientAck,
        current: &Snapshot,
        known: &BTreeMap<u64, Fingerprint>,
    ) -> Self {
        let matches = known.get(&ack.version).map(|f| *f == ack.fingerprint);
        Self {
            ack: ack.clone(),
            lag: current.version.saturating_sub(ack.version),
            on_latest: ack.version >= current.version,
            matches,
            divergent: matches == Some(false),
        }
    }
}

/// Counts over a ring's live clients.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvergenceSummary {
    /// Clients with a live ack.
    pub clients: u64,
    /// Of those, how many applied the current version.
    pub on_latest: u64,
    /// `on_latest / clients`; `None` when there are no clients (a share
    /// of nobody is undefined).
    pub on_latest_share: Option<f64>,
    /// Clients whose fingerprint differs from the server's.
    pub divergent: u64,
    /// Clients that report a version they could not apply.
    pub failing: u64,
}

impl ConvergenceSummary {
    /// The counts over `clients`.
    pub fn of(clients: &[ClientStatus]) -> Self {
        let count = |f: fn(&ClientStatus) -> bool| clients.iter().filter(|c| f(c)).count() as u64;
        let on_latest = count(|c| c.on_latest);
        Self {
            clients: clients.len() as u64,
            on_latest,
            on_latest_share: (!clients.is_empty()).then(|| on_latest as f64 / clients.len() as f64),
            divergent: count(|c| c.divergent),
            failing: count(|c| c.ack.failure.is_some()),
        }
    }
}

/// A ring's live clients and how far they have converged.
#[derive(Debug, Clone, PartialEq)]
pub struct Convergence {
    /// The version the clients are judged against.
    pub current: Arc<Snapshot>,
    /// Every client with a live ack, sorted by id.
    pub clients: Vec<ClientStatus>,
    /// Counts over `clients`.
    pub summary: ConvergenceSummary,
}
