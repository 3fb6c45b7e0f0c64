//! The xDS resources of one ring: what Envoy and gRPC are sent so that
//! their `ring_hash` balancer places keys exactly as ringd does. A ring
//! named `cache` is served as four resources, all named `cache`:
//!
//! - a `Listener` (for gRPC's `xds:///cache`): an API listener whose
//!   connection manager takes its routes from RDS over the same stream;
//! - a `RouteConfiguration`: every request to the cluster, hashed by the
//!   request header the server is configured with;
//! - a `Cluster`: EDS over ADS, `RING_HASH` with the ring's sizes and
//!   xxHash (`MAGLEV` with its table size for `envoy_maglev`), and panic
//!   mode off, so no request ever goes to a node ringd
//!   does not place keys on;
//! - a `ClusterLoadAssignment`: the active nodes, sorted by label, with
//!   their label as `envoy.lb`/`hash_key` and the weights of spec 5.10.1;
//!   draining nodes follow at priority 1, marked DRAINING.
//!
//! Why the nodes are in one locality, and the draining ones apart, is in
//! docs/xds.md.

use std::collections::BTreeSet;

use envoy_types::pb::envoy::config::cluster::v3::cluster::{
    self, ring_hash_lb_config::HashFunction, CommonLbConfig, EdsClusterConfig, MaglevLbConfig,
    RingHashLbConfig,
};
use envoy_types::pb::envoy::config::cluster::v3::Cluster;
use envoy_types::pb::envoy::config::core::v3::{
    address, config_source::ConfigSourceSpecifier, socket_address::PortSpecifier, Address,
    AggregatedConfigSource, ApiVersion, ConfigSource, HealthStatus, Locality, Metadata,
    SocketAddress,
};
use envoy_types::pb::envoy::config::endpoint::v3::{
    lb_endpoint::HostIdentifier, ClusterLoadAssignment, Endpoint, LbEndpoint, LocalityLbEndpoints,
};
use envoy_types::pb::envoy::config::listener::v3::{ApiListener, Listener};
use envoy_types::pb::envoy::config::route::v3::{
    route::Action, route_action::hash_policy, route_action::ClusterSpecifier,
    route_action::HashPolicy, route_match::PathSpecifier, Route, RouteAction, RouteConfiguration,
    RouteMatch, VirtualHost,
};
use envoy_types::pb::envoy::extensions::filters::http::router::v3::Router;
use envoy_types::pb::envoy::extensions::filters::network::http_connection_manager::v3::{
    http_connection_manager::RouteSpecifier, http_filter::ConfigType, HttpConnectionManager,
    HttpFilter, Rds,
};
use envoy_types::pb::envoy::r#type::v3::Percent;
use envoy_types::pb::google::protobuf::{
    value::Kind, Any, Struct, UInt32Value, UInt64Value, Value,
};
use prost::{Message, Name};

use crate::placement::envoy_ring_hash::{endpoint_key, endpoint_weights};
use crate::placement::{Algorithm, Node, NodeState};
use crate::ring::Snapshot;

/// The four kinds of resource, by the type URL a request names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum ResourceKind {
    /// LDS.
    Listener,
    /// RDS.
    Route,
    /// CDS.
    Cluster,
    /// EDS.
    Endpoints,
}

impl ResourceKind {
    /// Every kind.
    pub(super) const ALL: [ResourceKind; 4] = [
        ResourceKind::Listener,
        ResourceKind::Route,
        ResourceKind::Cluster,
        ResourceKind::Endpoints,
    ];

    /// The kind a type URL names, if ringd serves it.
    pub(super) fn of_type_url(url: &str) -> Option<ResourceKind> {
        ResourceKind::ALL.into_iter().find(|k| k.type_url() == url)
    }

    /// The type URL of the kind.
    pub(super) fn type_url(self) -> String {
        match self {
            ResourceKind::Listener => Listener::type_url(),
            ResourceKind::Route => RouteConfiguration::type_url(),
            ResourceKind::Cluster => Cluster::type_url(),
            ResourceKind::Endpoints => ClusterLoadAssignment::type_url(),
        }
    }

    /// Whether an empty list of names asks for every resource (LDS and
    /// CDS, by the xDS protocol's wildcard rule), not for none.
    pub(super) fn empty_is_wildcard(self) -> bool {
        matches!(self, ResourceKind::Listener | ResourceKind::Cluster)
    }

    /// Whether its content depends on the ring's version, not only on
    /// the ring's name and config.
    pub(super) fn follows_versions(self) -> bool {
        self == ResourceKind::Endpoints
    }
}

/// Whether ringd serves `snapshot`'s ring over xDS: rings whose placement
/// an xDS balancer reproduces (`envoy_ring_hash`, `envoy_maglev`).
pub(super) fn is_served(snapshot: &Snapshot) -> bool {
    snapshot.config.algorithm.is_xds()
}

/// What a ring's cluster is built from besides its name: two versions
/// with the same send the same cluster.
pub(super) fn cluster_key(snapshot: &Snapshot) -> (Algorithm, u64, u64, u64) {
    let c = &snapshot.config;
    (
        c.algorithm,
        c.minimum_ring_size,
        c.maximum_ring_size,
        c.table_size,
    )
}

/// The resource of `kind` for `snapshot`'s ring, encoded as an `Any`.
/// `hash_header` names the request header routes hash.
pub(super) fn resource(kind: ResourceKind, snapshot: &Snapshot, hash_header: &str) -> Any {
    let name = snapshot.ring.as_str();
    match kind {
        ResourceKind::Listener => pack(listener(name)),
        ResourceKind::Route => pack(route(name, hash_header)),
        ResourceKind::Cluster => pack(cluster(snapshot)),
        ResourceKind::Endpoints => pack(load_assignment(snapshot)),
    }
}

fn pack<T: Message + Name>(message: T) -> Any {
    Any {
        type_url: T::type_url(),
        value: message.encode_to_vec(),
    }
}

fn ads() -> ConfigSource {
    ConfigSource {
        resource_api_version: ApiVersion::V3 as i32,
        config_source_specifier: Some(ConfigSourceSpecifier::Ads(AggregatedConfigSource {})),
        ..Default::default()
    }
}

fn listener(name: &str) -> Listener {
    let manager = HttpConnectionManager {
        stat_prefix: name.to_owned(),
        route_specifier: Some(RouteSpecifier::Rds(Rds {
            config_source: Some(ads()),
            route_config_name: name.to_owned(),
        })),
        http_filters: vec![HttpFilter {
            name: "envoy.filters.http.router".to_owned(),
            config_type: Some(ConfigType::TypedConfig(pack(Router::default()))),
            ..Default::default()
        }],
        ..Default::default()
    };
    Listener {
        name: name.to_owned(),
        api_listener: Some(ApiListener {
            api_listener: Some(pack(manager)),
        }),
        ..Default::default()
    }
}

fn route(name: &str, hash_header: &str) -> RouteConfiguration {
    let action = RouteAction {
        cluster_specifier: Some(ClusterSpecifier::Cluster(name.to_owned())),
        hash_policy: vec![HashPolicy {
            policy_specifier: Some(hash_policy::PolicySpecifier::Header(hash_policy::Header {
                header_name: hash_header.to_owned(),
                regex_rewrite: None,
            })),
            terminal: true,
        }],
        ..Default::default()
    };
    RouteConfiguration {
        name: name.to_owned(),
        virtual_hosts: vec![VirtualHost {
            name: name.to_owned(),
            domains: vec!["*".to_owned()],
            routes: vec![Route {
                r#match: Some(RouteMatch {
                    path_specifier: Some(PathSpecifier::Prefix(String::new())),
                    ..Default::default()
                }),
                action: Some(Action::Route(action)),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn cluster(snapshot: &Snapshot) -> Cluster {
    let config = &snapshot.config;
    let (lb_policy, lb_config) = match config.algorithm {
        Algorithm::EnvoyMaglev => (
            cluster::LbPolicy::Maglev,
            cluster::LbConfig::MaglevLbConfig(MaglevLbConfig {
                table_size: Some(UInt64Value {
                    value: config.table_size,
                }),
            }),
        ),
        _ => (
            cluster::LbPolicy::RingHash,
            cluster::LbConfig::RingHashLbConfig(RingHashLbConfig {
                minimum_ring_size: Some(UInt64Value {
                    value: config.minimum_ring_size,
                }),
                maximum_ring_size: Some(UInt64Value {
                    value: config.maximum_ring_size,
                }),
                hash_function: HashFunction::XxHash as i32,
            }),
        ),
    };
    Cluster {
        name: snapshot.ring.as_str().to_owned(),
        cluster_discovery_type: Some(cluster::ClusterDiscoveryType::Type(
            cluster::DiscoveryType::Eds as i32,
        )),
        eds_cluster_config: Some(EdsClusterConfig {
            eds_config: Some(ads()),
            service_name: String::new(),
        }),
        lb_policy: lb_policy as i32,
        lb_config: Some(lb_config),
        // Envoy's panic mode would spread requests over every host once
        // few enough are healthy; ringd's placement has no such mode.
        common_lb_config: Some(CommonLbConfig {
            healthy_panic_threshold: Some(Percent { value: 0.0 }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn load_assignment(snapshot: &Snapshot) -> ClusterLoadAssignment {
    let nodes: Vec<Node> = snapshot.nodes.iter().map(|n| n.to_node()).collect();
    let mut active: Vec<&Node> = nodes
        .iter()
        .filter(|n| n.state == NodeState::Active)
        .collect();
    active.sort_by(|a, b| endpoint_key(a).cmp(endpoint_key(b)));
    let owned: Vec<Node> = active.iter().map(|n| (*n).clone()).collect();
    // The ring was accepted with these nodes, so their weights exist; a
    // ring that somehow had none would be served without endpoints.
    let weights = endpoint_weights(&owned).unwrap_or_default();
    let mut addresses = BTreeSet::new();
    let mut live = Vec::with_capacity(active.len());
    for (node, weight) in active.iter().zip(weights) {
        if let Some(e) = lb_endpoint(node, weight, HealthStatus::Unknown) {
            addresses.insert(node.address.as_ref().map(|a| a.as_str().to_owned()));
            live.push(e);
        }
    }
    // Draining nodes are told apart so that Envoy drains their
    // connections; gRPC drops them. A draining node that shares an
    // address with another endpoint is left out: both programs refuse an
    // assignment that names one address twice.
    let draining: Vec<LbEndpoint> = nodes
        .iter()
        .filter(|n| n.state == NodeState::Draining)
        .filter(|n| addresses.insert(n.address.as_ref().map(|a| a.as_str().to_owned())))
        .filter_map(|n| lb_endpoint(n, 1, HealthStatus::Draining))
        .collect();
    let mut endpoints = Vec::new();
    if !live.is_empty() {
        endpoints.push(locality(live, 0));
    }
    if !draining.is_empty() {
        // Priorities must start at 0 with no gap.
        let priority = u32::from(!endpoints.is_empty());
        endpoints.push(locality(draining, priority));
    }
    ClusterLoadAssignment {
        cluster_name: snapshot.ring.as_str().to_owned(),
        endpoints,
        ..Default::default()
    }
}

fn locality(lb_endpoints: Vec<LbEndpoint>, priority: u32) -> LocalityLbEndpoints {
    LocalityLbEndpoints {
        locality: Some(Locality::default()),
        lb_endpoints,
        // gRPC drops a locality without a weight.
        load_balancing_weight: Some(UInt32Value { value: 1 }),
        priority,
        ..Default::default()
    }
}

fn lb_endpoint(node: &Node, weight: u32, health: HealthStatus) -> Option<LbEndpoint> {
    let address: std::net::SocketAddr = node.address.as_ref()?.as_str().parse().ok()?;
    let mut envoy_lb = vec![("hash_key", endpoint_key(node).to_owned())];
    let mut ringd = vec![("node", node.id.as_str().to_owned())];
    if let Some(zone) = &node.zone {
        ringd.push(("zone", zone.as_str().to_owned()));
    }
    envoy_lb.sort();
    let metadata = Metadata {
        filter_metadata: [
            ("envoy.lb".to_owned(), strings(envoy_lb)),
            ("ringd".to_owned(), strings(ringd)),
        ]
        .into_iter()
        .collect(),
        ..Default::default()
    };
    Some(LbEndpoint {
        host_identifier: Some(HostIdentifier::Endpoint(Endpoint {
            address: Some(Address {
                address: Some(address::Address::SocketAddress(SocketAddress {
                    address: address.ip().to_string(),
                    port_specifier: Some(PortSpecifier::PortValue(u32::from(address.port()))),
                    ..Default::default()
                })),
            }),
            ..Default::default()
        })),
        health_status: health as i32,
        metadata: Some(metadata),
        load_balancing_weight: Some(UInt32Value { value: weight }),
    })
}

fn strings(fields: Vec<(&str, String)>) -> Struct {
    Struct {
        fields: fields
            .into_iter()
            .map(|(k, v)| {
                (
                    k.to_owned(),
                    Value {
                        kind: Some(Kind::StringValue(v)),
                    },
                )
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests;
