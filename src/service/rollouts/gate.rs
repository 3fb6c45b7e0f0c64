//! Reading a step's gate from the ring's client acks.

use super::super::{RingService, ServiceError};
use crate::ring::rollout::{GateReading, RolloutRecord};

impl RingService {
    /// How the ring's live clients stand against the rollout's last
    /// committed version: applied it (or a later one) with the server's
    /// fingerprint, behind it, or applied it with another fingerprint.
    pub async fn gate_reading(&self, r: &RolloutRecord) -> Result<GateReading, ServiceError> {
        let version = r.last_applied().map_or(r.base_version, |a| a.version);
        let convergence = self.clients(&r.ring).await?;
        let mut gate = GateReading::default();
        for c in convergence.clients {
            gate.live += 1;
            if c.ack.version < version {
                gate.lagging.push(c.ack.client_id);
            } else if c.divergent {
                gate.divergent.push((c.ack.client_id, c.ack.version));
            } else {
                gate.acked += 1;
            }
        }
        Ok(gate)
    }
}
