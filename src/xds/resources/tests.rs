use envoy_types::pb::envoy::config::cluster::v3::{cluster, Cluster};
use envoy_types::pb::envoy::config::core::v3::{address, HealthStatus};
use envoy_types::pb::envoy::config::endpoint::v3::{
    lb_endpoint::HostIdentifier, ClusterLoadAssignment,
};
use envoy_types::pb::envoy::config::listener::v3::Listener;
use envoy_types::pb::envoy::config::route::v3::{
    route, route_action::hash_policy, RouteConfiguration,
};
use envoy_types::pb::envoy::extensions::filters::network::http_connection_manager::v3::{
    http_connection_manager::RouteSpecifier, HttpConnectionManager,
};
use envoy_types::pb::google::protobuf::value::Kind;
use prost::Message;
use time::OffsetDateTime;

use super::{is_served, resource, ResourceKind};
use crate::placement::{Algorithm, HashKey, NodeId, NodeState, RingConfig, Weight, Zone};
use crate::ring::{ChangeOp, NodeRecord, RequestedOp, RingName, Role, Snapshot};

fn node(id: &str, address: &str, weight: u64) -> NodeRecord {
    let mut n = NodeRecord::new(NodeId::new(id).unwrap());
    n.address = Some(address.to_owned());
    n.weight = Weight::new(weight).unwrap();
    n
}

fn ring(config: RingConfig, nodes: Vec<NodeRecord>) -> Snapshot {
    let now = OffsetDateTime::UNIX_EPOCH;
    let (first, placement) =
        Snapshot::first(RingName::new("cache").unwrap(), config, Role::Admin, now).unwrap();
    if nodes.is_empty() {
        return first;
    }
    let ops: Vec<RequestedOp> = nodes
        .into_iter()
        .map(|node| RequestedOp::Op(ChangeOp::Upsert { node }))
        .collect();
    first
        .propose(&placement, ops, None, Role::Admin, now)
        .unwrap()
        .unwrap()
        .snapshot
}

fn decode<T: Message + Default>(kind: ResourceKind, s: &Snapshot) -> T {
    let any = resource(kind, s, "ringd-key");
    assert_eq!(any.type_url, kind.type_url());
    T::decode(any.value.as_slice()).unwrap()
}

/// (address, hash_key, weight, health, priority) of every endpoint.
fn endpoints(cla: &ClusterLoadAssignment) -> Vec<(String, String, u32, i32, u32)> {
    let mut out = Vec::new();
    for locality in &cla.endpoints {
        assert!(locality.locality.is_some());
        assert_eq!(locality.load_balancing_weight.unwrap().value, 1);
        for e in &locality.lb_endpoints {
            let Some(HostIdentifier::Endpoint(endpoint)) = &e.host_identifier else {
                panic!("no endpoint");
            };
            let Some(address::Address::SocketAddress(sa)) =
                &endpoint.address.as_ref().unwrap().address
            else {
                panic!("no socket address");
            };
            let port = match sa.port_specifier {
                Some(envoy_types::pb::envoy::config::core::v3::socket_address::PortSpecifier::PortValue(p)) => p,
                _ => panic!("no port"),
            };
            let lb = &e.metadata.as_ref().unwrap().filter_metadata["envoy.lb"];
            let Some(Kind::StringValue(key)) = &lb.fields["hash_key"].kind else {
                panic!("no hash_key");
            };
            out.push((
                format!("{}:{port}", sa.address),
                key.clone(),
                e.load_balancing_weight.unwrap().value,
                e.health_status,
                locality.priority,
            ));
        }
    }
    out
}

#[test]
fn endpoints_are_the_active_nodes_by_label_then_the_draining_ones() {
    let mut bee = node("b", "[2001:db8::2]:80", 3);
    bee.hash_key = Some(HashKey::new("bee").unwrap());
    bee.zone = Some(Zone::new("z1").unwrap());
    let mut c = node("c", "10.0.0.3:80", 5);
    c.state = NodeState::Draining;
    // Draining at the address of an active node: left out.
    let mut d = node("d", "10.0.0.1:80", 1);
    d.state = NodeState::Draining;
    let mut j = node("j", "10.0.0.9:80", 1);
    j.state = NodeState::Joining;
    let s = ring(
        RingConfig::new(Algorithm::EnvoyRingHash),
        vec![node("a", "10.0.0.1:80", 1), bee, c, d, j],
    );
    assert!(is_served(&s));
    let cla: ClusterLoadAssignment = decode(ResourceKind::Endpoints, &s);
    assert_eq!(cla.cluster_name, "cache");
    let unknown = HealthStatus::Unknown as i32;
    let draining = HealthStatus::Draining as i32;
    assert_eq!(
        endpoints(&cla),
        vec![
            ("10.0.0.1:80".into(), "a".into(), 1 << 29, unknown, 0),
            ("2001:db8::2:80".into(), "bee".into(), 3 << 29, unknown, 0),
            ("10.0.0.3:80".into(), "c".into(), 1, draining, 1),
        ]
    );
    let zone = &cla.endpoints[0].lb_endpoints[1]
        .metadata
        .as_ref()
        .unwrap()
        .filter_metadata["ringd"]
        .fields["zone"];
    assert_eq!(zone.kind, Some(Kind::StringValue("z1".into())));
}

#[test]
fn a_ring_of_draining_nodes_only_puts_them_at_priority_0() {
    let mut c = node("c", "10.0.0.3:80", 5);
    c.state = NodeState::Draining;
    let s = ring(RingConfig::new(Algorithm::EnvoyRingHash), vec![c]);
    let cla: ClusterLoadAssignment = decode(ResourceKind::Endpoints, &s);
    let draining = HealthStatus::Draining as i32;
    assert_eq!(
        endpoints(&cla),
        vec![("10.0.0.3:80".into(), "c".into(), 1, draining, 0)]
    );
    let empty = ring(RingConfig::new(Algorithm::EnvoyRingHash), vec![]);
    let cla: ClusterLoadAssignment = decode(ResourceKind::Endpoints, &empty);
    assert!(cla.endpoints.is_empty());
}

#[test]
fn the_cluster_is_ring_hash_over_eds_with_the_rings_sizes_and_no_panic_mode() {
    let config = RingConfig {
        minimum_ring_size: 12,
        maximum_ring_size: 2048,
        ..RingConfig::new(Algorithm::EnvoyRingHash)
    };
    let s = ring(config, vec![node("a", "10.0.0.1:80", 1)]);
    let c: Cluster = decode(ResourceKind::Cluster, &s);
    assert_eq!(c.name, "cache");
    assert_eq!(c.lb_policy, cluster::LbPolicy::RingHash as i32);
    assert_eq!(
        c.cluster_discovery_type,
        Some(cluster::ClusterDiscoveryType::Type(
            cluster::DiscoveryType::Eds as i32
        ))
    );
    let Some(cluster::LbConfig::RingHashLbConfig(rh)) = c.lb_config else {
        panic!("no ring hash config");
    };
    assert_eq!(rh.minimum_ring_size.unwrap().value, 12);
    assert_eq!(rh.maximum_ring_size.unwrap().value, 2048);
    assert_eq!(rh.hash_function, 0, "XX_HASH");
    let threshold = c.common_lb_config.unwrap().healthy_panic_threshold.unwrap();
    assert_eq!(threshold.value, 0.0);
    assert!(c.eds_cluster_config.unwrap().eds_config.is_some());
}

#[test]
fn the_listener_routes_every_request_to_the_cluster_by_the_hash_header() {
    let s = ring(RingConfig::new(Algorithm::EnvoyRingHash), vec![]);
    let l: Listener = decode(ResourceKind::Listener, &s);
    assert_eq!(l.name, "cache");
    let any = l.api_listener.unwrap().api_listener.unwrap();
    let hcm = HttpConnectionManager::decode(any.value.as_slice()).unwrap();
    let Some(RouteSpecifier::Rds(rds)) = hcm.route_specifier else {
        panic!("no RDS");
    };
    assert_eq!(rds.route_config_name, "cache");
    assert_eq!(hcm.http_filters.len(), 1);
    assert_eq!(
        hcm.http_filters[0].config_type.as_ref().map(|c| match c {
            envoy_types::pb::envoy::extensions::filters::network::http_connection_manager::v3::http_filter::ConfigType::TypedConfig(a) => a.type_url.clone(),
            _ => String::new(),
        }),
        Some("type.googleapis.com/envoy.extensions.filters.http.router.v3.Router".into())
    );
    let r: RouteConfiguration = decode(ResourceKind::Route, &s);
    assert_eq!(r.name, "cache");
    let host = &r.virtual_hosts[0];
    assert_eq!(host.domains, vec!["*".to_owned()]);
    let Some(route::Action::Route(action)) = &host.routes[0].action else {
        panic!("no route action");
    };
    let Some(hash_policy::PolicySpecifier::Header(h)) = &action.hash_policy[0].policy_specifier
    else {
        panic!("no header hash policy");
    };
    assert_eq!(h.header_name, "ringd-key");
}

#[test]
fn only_envoy_rings_are_served() {
    let s = ring(RingConfig::new(Algorithm::Ring), vec![]);
    assert!(!is_served(&s));
}
