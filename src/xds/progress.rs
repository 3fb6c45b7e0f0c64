//! What a proxy has taken, ring by ring, and the client acks it makes.
//!
//! A proxy is at version N of a ring once it has ACKed the ring's
//! endpoints built from N and, if it subscribes to the ring's cluster,
//! the cluster N's config makes (a version that changes no ring size,
//! table size or algorithm sends no new cluster). That version is recorded as the proxy's ack, under its
//! node id, kind `proxy`, with the fingerprint of N: the resources were
//! built from N's snapshot. A NACK is recorded as the failure of the
//! version it refused, with the proxy's own error detail, next to the
//! version it still runs; rollouts gate on both as on any client's ack.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::resources::{cluster_key, ResourceKind};
use crate::ring::{ApplyFailure, ClientId, ClientKind, RingName, Snapshot};
use crate::service::{AckReport, RingService};

/// A response a stream sent, and not yet superseded by another of its
/// kind: what an ACK or a NACK of its nonce answers.
#[derive(Debug, Clone)]
pub(super) struct Sent {
    pub(super) nonce: String,
    pub(super) version_info: String,
    /// The versions the resources were built from.
    pub(super) rings: Vec<Arc<Snapshot>>,
}

/// One stream's progress.
pub(super) struct Progress {
    client: ClientId,
    ttl: Duration,
    rings: BTreeMap<RingName, RingProgress>,
}

#[derive(Default)]
struct RingProgress {
    /// The version whose endpoints the proxy ACKed last.
    endpoints: Option<Arc<Snapshot>>,
    /// What the cluster it ACKed last was built from.
    cluster: Option<ClusterKey>,
    /// The version last recorded as applied.
    applied: Option<Arc<Snapshot>>,
    /// The newer version it refused, if any.
    failure: Option<ApplyFailure>,
    /// Changed since last recorded.
    changed: bool,
}

type ClusterKey = (crate::placement::Algorithm, u64, u64, u64);

impl Progress {
    /// Nothing taken yet by `client`; its acks count for `ttl`.
    pub(super) fn new(client: ClientId, ttl: Duration) -> Self {
        Self {
            client,
            ttl,
            rings: BTreeMap::new(),
        }
    }

    /// The proxy ACKed `sent`, a response of `kind`.
    pub(super) fn acked(&mut self, kind: ResourceKind, sent: &Sent) {
        for snapshot in &sent.rings {
            let p = self.rings.entry(snapshot.ring.clone()).or_default();
            match kind {
                ResourceKind::Endpoints => p.endpoints = Some(snapshot.clone()),
                ResourceKind::Cluster => p.cluster = Some(cluster_key(snapshot)),
                ResourceKind::Listener | ResourceKind::Route => continue,
            }
            p.changed = true;
        }
    }

    /// The proxy refused `sent`, a response of `kind`, saying `detail`:
    /// a failure of each ring whose resource was new in it.
    pub(super) fn refused(&mut self, kind: ResourceKind, sent: &Sent, detail: &str) {
        let detail = match detail.trim() {
            "" => "the proxy refused the resources without a message",
            d => d,
        };
        for snapshot in &sent.rings {
            let p = self.rings.entry(snapshot.ring.clone()).or_default();
            let taken = match kind {
                ResourceKind::Endpoints => p
                    .endpoints
                    .as_ref()
                    .is_some_and(|e| e.version == snapshot.version),
                ResourceKind::Cluster => p.cluster == Some(cluster_key(snapshot)),
                ResourceKind::Listener | ResourceKind::Route => false,
            };
            if taken {
                continue;
            }
            p.failure = Some(ApplyFailure {
                version: snapshot.version,
                error: detail.chars().take(ApplyFailure::MAX_ERROR).collect(),
            });
            p.changed = true;
        }
    }

    /// Records what changed since the last call. `wants_cluster` says
    /// whether the proxy subscribes to a ring's cluster.
    pub(super) async fn report(
        &mut self,
        service: &RingService,
        wants_cluster: impl Fn(&RingName) -> bool,
    ) {
        for (ring, p) in &mut self.rings {
            if !std::mem::take(&mut p.changed) {
                continue;
            }
            if let Some(e) = &p.endpoints {
                let cluster_taken = !wants_cluster(ring) || p.cluster == Some(cluster_key(e));
                let newer = p.applied.as_ref().is_none_or(|a| a.version < e.version);
                if cluster_taken && newer {
                    p.applied = Some(e.clone());
                }
            }
            let Some(applied) = &p.applied else {
                if let Some(f) = &p.failure {
                    // No version to record the failure beside: the proxy
                    // never took one. Its own log says the same.
                    tracing::warn!(
                        ring = %ring,
                        client = %self.client.as_str(),
                        version = f.version,
                        error = %f.error.escape_debug(),
                        "an xDS client refused the first version it was sent"
                    );
                }
                continue;
            };
            if p.failure
                .as_ref()
                .is_some_and(|f| f.version <= applied.version)
            {
                p.failure = None;
            }
            record(service, &self.client, self.ttl, ring, applied, &p.failure).await;
        }
    }

    /// Records every ring's applied version again, so that the acks of a
    /// proxy that stays connected do not expire.
    pub(super) async fn refresh(&self, service: &RingService) {
        for (ring, p) in &self.rings {
            if let Some(applied) = &p.applied {
                record(service, &self.client, self.ttl, ring, applied, &p.failure).await;
            }
        }
    }
}

async fn record(
    service: &RingService,
    client: &ClientId,
    ttl: Duration,
    ring: &RingName,
    applied: &Snapshot,
    failure: &Option<ApplyFailure>,
) {
    let report = AckReport {
        client_id: client.clone(),
        version: applied.version,
        fingerprint: applied.fingerprint,
        kind: ClientKind::Proxy,
        failure: failure.clone(),
    };
    if let Err(e) = service.clients().record_ack(ring, report, ttl).await {
        // The ring may have been deleted meanwhile; the next ack retries.
        tracing::warn!(ring = %ring, client = %client.as_str(), error = %e, "cannot record an xDS client's ack");
    }
}
