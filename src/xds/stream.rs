//! One ADS stream, state of the world: what the proxy subscribed to, what
//! it was last sent of each kind, and what it acknowledged, ring by ring.
//!
//! Each response of a kind carries every subscribed resource of that kind
//! (the SotW rule for LDS and CDS, harmless for RDS and EDS), and is sent
//! again only when its `version_info` changes: for EDS that is the rings'
//! versions and fingerprints, for the other kinds a digest of their
//! content, so that a ring's new version does not make Envoy rebuild an
//! unchanged cluster. The acks it leads to are `progress.rs`'s business.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use envoy_types::pb::envoy::service::discovery::v3::{DiscoveryRequest, DiscoveryResponse};
use prost::Message;
use sha2::{Digest, Sha256};
use tokio::sync::{broadcast, mpsc};
use tokio_stream::StreamExt;
use tonic::{Status, Streaming};

use super::progress::{Progress, Sent};
use super::resources::{is_served, resource, ResourceKind};
use super::XdsSettings;
use crate::hub::RingsChange;
use crate::ring::{ClientId, RingName, Snapshot};
use crate::service::RingService;

/// What a stream sends to its proxy.
pub(super) type Outbox = mpsc::Sender<Result<DiscoveryResponse, Status>>;

/// Which resources of a kind a proxy asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Names {
    /// Every one (LDS and CDS with no names, or `*`).
    All,
    /// These.
    Only(BTreeSet<String>),
}

impl Names {
    fn of(kind: ResourceKind, names: &[String]) -> Names {
        if names.iter().any(|n| n == "*") || (names.is_empty() && kind.empty_is_wildcard()) {
            Names::All
        } else {
            Names::Only(names.iter().cloned().collect())
        }
    }

    fn covers(&self, ring: &RingName) -> bool {
        match self {
            Names::All => true,
            Names::Only(names) => names.contains(ring.as_str()),
        }
    }
}

#[derive(Debug)]
struct Subscription {
    names: Names,
    sent: Option<Sent>,
}

/// The stream's state.
struct AdsStream {
    service: Arc<RingService>,
    settings: Arc<XdsSettings>,
    rings: BTreeMap<RingName, Arc<Snapshot>>,
    subscriptions: BTreeMap<ResourceKind, Subscription>,
    nonces: u64,
    progress: Option<Progress>,
    out: Outbox,
}

/// Why a stream ends.
enum End {
    /// The proxy went away, or ended its side.
    Gone,
    /// Told to the proxy as the stream's status.
    Status(Status),
}

/// Serves one stream until the proxy leaves or the server shuts down.
pub(super) async fn run(
    service: Arc<RingService>,
    settings: Arc<XdsSettings>,
    mut requests: Streaming<DiscoveryRequest>,
    out: Outbox,
) {
    // Subscribed before the rings are listed, so no version falls between.
    let mut changes = service.hub().subscribe_rings();
    let mut stream = AdsStream {
        service,
        settings,
        rings: BTreeMap::new(),
        subscriptions: BTreeMap::new(),
        nonces: 0,
        progress: None,
        out,
    };
    let end = match stream.reload().await {
        Err(end) => end,
        Ok(()) => stream.serve(&mut requests, &mut changes).await,
    };
    if let End::Status(status) = end {
        let _ = stream.out.send(Err(status)).await;
    }
}

impl AdsStream {
    async fn serve(
        &mut self,
        requests: &mut Streaming<DiscoveryRequest>,
        changes: &mut broadcast::Receiver<RingsChange>,
    ) -> End {
        let mut refresh = tokio::time::interval(self.settings.refresh_every());
        refresh.tick().await;
        loop {
            let step = tokio::select! {
                request = requests.next() => match request {
                    None => Err(End::Gone),
                    Some(Err(e)) => {
                        tracing::debug!(error = %e, "xDS stream ended with an error");
                        Err(End::Gone)
                    }
                    Some(Ok(request)) => self.on_request(request).await,
                },
                change = changes.recv() => self.on_change(change).await,
                _ = refresh.tick() => {
                    if let Some(p) = &mut self.progress {
                        p.refresh(&self.service).await;
                    }
                    Ok(())
                }
            };
            if let Err(end) = step {
                return end;
            }
        }
    }

    /// Reads every served ring again: at the start, and when the stream
    /// fell behind the hub's announcements.
    async fn reload(&mut self) -> Result<(), End> {
        let listed = self.service.rings().list().await.map_err(|e| {
            End::Status(Status::unavailable(format!(
                "ringd cannot read its rings now ({e}); retry, or connect to another instance"
            )))
        })?;
        self.rings = listed
            .into_iter()
            .filter(is_served)
            .map(|s| (s.ring.clone(), Arc::new(s)))
            .collect();
        Ok(())
    }

    async fn on_change(
        &mut self,
        change: Result<RingsChange, broadcast::error::RecvError>,
    ) -> Result<(), End> {
        match change {
            Ok(RingsChange::Version(snapshot)) => {
                let known = self.rings.get(&snapshot.ring).map(|s| s.version);
                if known.is_some_and(|v| v >= snapshot.version) {
                    return Ok(());
                }
                if is_served(&snapshot) {
                    self.rings.insert(snapshot.ring.clone(), snapshot);
                } else if self.rings.remove(&snapshot.ring).is_none() {
                    return Ok(());
                }
            }
            Ok(RingsChange::Deleted(ring)) => {
                if self.rings.remove(&ring).is_none() {
                    return Ok(());
                }
            }
            Ok(RingsChange::Closing) | Err(broadcast::error::RecvError::Closed) => {
                return Err(End::Status(Status::unavailable(
                    "this ringd instance is shutting down; reconnect to another",
                )));
            }
            Err(broadcast::error::RecvError::Lagged(_)) => self.reload().await?,
        }
        for kind in ResourceKind::ALL {
            self.respond(kind, false).await?;
        }
        Ok(())
    }

    async fn on_request(&mut self, request: DiscoveryRequest) -> Result<(), End> {
        if self.progress.is_none() {
            let client = client_id(&request)?;
            self.progress = Some(Progress::new(client, self.settings.ack_ttl));
        }
        let Some(kind) = ResourceKind::of_type_url(&request.type_url) else {
            // Answered with nothing, as the protocol allows: a proxy may
            // ask for kinds (secrets, runtime) this server has none of.
            tracing::debug!(type_url = %request.type_url, "xDS request for a kind ringd does not serve");
            return Ok(());
        };
        let names = Names::of(kind, &request.resource_names);
        let subscription = self.subscriptions.entry(kind).or_insert(Subscription {
            names: names.clone(),
            sent: None,
        });
        let answers_latest = !request.response_nonce.is_empty()
            && subscription
                .sent
                .as_ref()
                .is_some_and(|s| s.nonce == request.response_nonce);
        if answers_latest {
            let sent = subscription.sent.clone();
            if let (Some(sent), Some(progress)) = (sent, self.progress.as_mut()) {
                match &request.error_detail {
                    None => progress.acked(kind, &sent),
                    Some(status) => progress.refused(kind, &sent, &status.message),
                }
                let cds = self.subscriptions.get(&ResourceKind::Cluster);
                let wants_cluster = |ring: &RingName| cds.is_some_and(|c| c.names.covers(ring));
                progress.report(&self.service, wants_cluster).await;
            }
        } else if !request.response_nonce.is_empty() {
            // An answer to a response already superseded: the proxy will
            // answer the newer one too.
            return Ok(());
        }
        let subscription = self.subscriptions.get_mut(&kind).expect("inserted above");
        let changed = subscription.names != names || subscription.sent.is_none();
        subscription.names = names;
        // A request that is not an answer (a new stream, or new names) is
        // always answered, so a proxy learns at once that a ring it names
        // is not served here.
        self.respond(kind, changed || !answers_latest).await
    }

    /// Sends `kind`'s response if it differs from the last one sent, or
    /// if `always`.
    async fn respond(&mut self, kind: ResourceKind, always: bool) -> Result<(), End> {
        let Some(subscription) = self.subscriptions.get(&kind) else {
            return Ok(());
        };
        let rings: Vec<Arc<Snapshot>> = self
            .rings
            .values()
            .filter(|s| subscription.names.covers(&s.ring))
            .cloned()
            .collect();
        let resources: Vec<_> = rings
            .iter()
            .map(|s| resource(kind, s, &self.settings.hash_header))
            .collect();
        let version_info = if kind.follows_versions() {
            rings
                .iter()
                .map(|s| format!("{}:{}/{}", s.ring, s.version, s.fingerprint))
                .collect::<Vec<_>>()
                .join(",")
        } else {
            let mut digest = Sha256::new();
            for r in &resources {
                digest.update(r.encode_to_vec());
            }
            let digest = digest.finalize();
            digest[..8].iter().map(|b| format!("{b:02x}")).collect()
        };
        if !always
            && subscription
                .sent
                .as_ref()
                .is_some_and(|s| s.version_info == version_info)
        {
            return Ok(());
        }
        self.nonces += 1;
        let nonce = self.nonces.to_string();
        let response = DiscoveryResponse {
            version_info: version_info.clone(),
            resources,
            type_url: kind.type_url(),
            nonce: nonce.clone(),
            ..Default::default()
        };
        if let Some(s) = self.subscriptions.get_mut(&kind) {
            s.sent = Some(Sent {
                nonce,
                version_info,
                rings,
            });
        }
        self.out.send(Ok(response)).await.map_err(|_| End::Gone)
    }
}

/// The client id a stream's acks are recorded under: its node's id.
fn client_id(request: &DiscoveryRequest) -> Result<ClientId, End> {
    let id = request.node.as_ref().map(|n| n.id.as_str()).unwrap_or("");
    if id.is_empty() {
        return Err(End::Status(Status::invalid_argument(
            "the stream's first request names no node id: set `node.id` in the bootstrap; \
             ringd records the proxy's acks under it in GET /v1/rings/{ring}/clients",
        )));
    }
    ClientId::new(id).map_err(|e| End::Status(Status::invalid_argument(format!("node.id: {e}"))))
}
