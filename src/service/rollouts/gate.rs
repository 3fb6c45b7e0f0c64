//! Reading a step's gate from the ring's client acks.

use super::Rollouts;
use crate::ring::rollout::{GateReading, RolloutRecord};
use crate::service::clients::Convergence;
use crate::service::ServiceError;

impl Rollouts {
    /// How the ring's live clients stand against the rollout's last
    /// committed version: applied it (or a later one) with the server's
    /// fingerprint, behind it, or applied it with another fingerprint.
    pub async fn gate_reading(&self, r: &RolloutRecord) -> Result<GateReading, ServiceError> {
        Ok(gate_of(r, &self.clients.of(&r.ring).await?))
    }
}

/// The gate of `r` as `convergence`, the ring's clients read once, has
/// it: the reading [`Rollouts::gate_reading`] makes, for a caller that
/// holds the clients already (the metrics read every ring's at once).
pub fn gate_of(r: &RolloutRecord, convergence: &Convergence) -> GateReading {
    let version = r.last_applied().map_or(r.base_version, |a| a.version);
    let mut gate = GateReading::default();
    for c in &convergence.clients {
        gate.live += 1;
        if c.ack.version < version {
            gate.lagging.push(c.ack.client_id.clone());
        } else if c.divergent {
            gate.divergent
                .push((c.ack.client_id.clone(), c.ack.version));
        } else {
            gate.acked += 1;
        }
    }
    gate
}
