//! The xDS server: Envoy's Aggregated Discovery Service (gRPC, state of
//! the world) for every `envoy_ring_hash` ring, so that Envoy and gRPC's
//! `ring_hash` balancer follow the ring and place keys as ringd does.
//!
//! - `resources` builds a ring's Listener, RouteConfiguration, Cluster
//!   and ClusterLoadAssignment;
//! - `stream` serves one ADS stream: subscriptions, responses, nonces;
//! - `progress` turns ACKs and NACKs into client acks and failures.
//!
//! The protocol as ringd speaks it, and the bootstraps that reach it, are
//! in docs/xds.md.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use envoy_types::pb::envoy::service::discovery::v3::aggregated_discovery_service_server::{
    AggregatedDiscoveryService, AggregatedDiscoveryServiceServer,
};
use envoy_types::pb::envoy::service::discovery::v3::{
    DeltaDiscoveryRequest, DeltaDiscoveryResponse, DiscoveryRequest, DiscoveryResponse,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use crate::service::RingService;

mod progress;
mod resources;
mod stream;

/// The request header routes hash by default: gRPC metadata or an HTTP
/// header, whose value is the key ringd places.
pub const DEFAULT_HASH_HEADER: &str = "ringd-key";

/// Responses queued per stream before the stream waits for its proxy.
const OUTBOX: usize = 16;

/// Checks a stream's credentials (its `authorization` metadata); the
/// error is the detail the proxy is told.
pub type Authorize =
    Arc<dyn Fn(&tonic::codegen::http::HeaderMap) -> Result<(), String> + Send + Sync>;

/// How the xDS server serves.
#[derive(Debug, Clone)]
pub struct XdsSettings {
    /// The request header routes hash.
    pub hash_header: String,
    /// How long a proxy's ack counts; renewed while its stream is open.
    pub ack_ttl: Duration,
}

impl XdsSettings {
    /// How often a stream records its acks again: three times per TTL, at
    /// most once a second.
    fn refresh_every(&self) -> Duration {
        (self.ack_ttl / 3).max(Duration::from_secs(1))
    }
}

/// Checks a hash header name: a lowercase HTTP header name (gRPC
/// metadata keys are lowercase), not a binary (`-bin`) one, which gRPC
/// does not hash, and not a pseudo-header.
pub fn check_hash_header(name: &str) -> Result<(), String> {
    let token = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b));
    if !token {
        return Err(format!(
            "`{}` is not a header name gRPC and Envoy can hash by: use lowercase letters, digits, `-`, `_` and `.`, as `ringd-key`",
            name.escape_debug()
        ));
    }
    if name.ends_with("-bin") {
        return Err("a `-bin` header is binary metadata, which gRPC does not hash".into());
    }
    Ok(())
}

/// The ADS service, for tonic.
pub struct Xds {
    service: Arc<RingService>,
    settings: Arc<XdsSettings>,
    authorize: Authorize,
}

impl Xds {
    /// The xDS server of `service`'s rings; `authorize` checks each
    /// stream's credentials.
    pub fn new(
        service: Arc<RingService>,
        settings: XdsSettings,
        authorize: Authorize,
    ) -> AggregatedDiscoveryServiceServer<Xds> {
        AggregatedDiscoveryServiceServer::new(Xds {
            service,
            settings: Arc::new(settings),
            authorize,
        })
    }
}

type Responses<T> = Pin<Box<dyn tokio_stream::Stream<Item = Result<T, Status>> + Send>>;

#[tonic::async_trait]
impl AggregatedDiscoveryService for Xds {
    type StreamAggregatedResourcesStream = Responses<DiscoveryResponse>;

    async fn stream_aggregated_resources(
        &self,
        request: Request<Streaming<DiscoveryRequest>>,
    ) -> Result<Response<Self::StreamAggregatedResourcesStream>, Status> {
        (self.authorize)(&request.metadata().clone().into_headers())
            .map_err(Status::unauthenticated)?;
        let (out, responses) = mpsc::channel(OUTBOX);
        tokio::spawn(stream::run(
            self.service.clone(),
            self.settings.clone(),
            request.into_inner(),
            out,
        ));
        Ok(Response::new(Box::pin(ReceiverStream::new(responses))))
    }

    type DeltaAggregatedResourcesStream = Responses<DeltaDiscoveryResponse>;

    async fn delta_aggregated_resources(
        &self,
        _request: Request<Streaming<DeltaDiscoveryRequest>>,
    ) -> Result<Response<Self::DeltaAggregatedResourcesStream>, Status> {
        Err(Status::unimplemented(
            "ringd serves state-of-the-world ADS: set the xDS server's api_type to GRPC, not DELTA_GRPC",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::check_hash_header;

    #[test]
    fn only_headers_grpc_can_hash_are_accepted() {
        assert_eq!(check_hash_header("ringd-key"), Ok(()));
        assert_eq!(check_hash_header("x_user.id2"), Ok(()));
        assert!(check_hash_header("Ringd-Key")
            .unwrap_err()
            .contains("lowercase"));
        assert!(check_hash_header("").is_err());
        assert!(check_hash_header(":path").is_err());
        assert_eq!(
            check_hash_header("key-bin"),
            Err("a `-bin` header is binary metadata, which gRPC does not hash".into())
        );
        assert!(check_hash_header("a\u{1b}b")
            .unwrap_err()
            .contains("a\\u{1b}b"));
    }
}
