use super::*;
use crate::placement::{
    Address, HashFunction, HashKey, HashTag, Node, NodeId, NodeState, RingConfig, Weight,
};

fn ring() -> RingName {
    RingName::new("cache").unwrap()
}

fn node(id: &str, address: Option<&str>, weight: u64) -> Node {
    let mut n = Node::new(NodeId::new(id).unwrap()).with_weight(Weight::new(weight).unwrap());
    n.address = address.map(|a| Address::new(a).unwrap());
    n
}

fn placement(config: RingConfig, nodes: &[Node]) -> Placement {
    Placement::build(&config, nodes).unwrap()
}

fn options(format: ProxyFormat, settings: ExportSettings) -> ExportOptions {
    ExportOptions::check(format, &ring(), settings).unwrap()
}

fn head(p: &Placement, version: u64, format: &str) -> String {
    format!(
        "# ringd ring cache version {version} fingerprint {} ({format})\n",
        p.fingerprint()
    )
}

#[test]
fn nginx_writes_the_active_servers_in_id_order() {
    let p = placement(
        RingConfig::new(Algorithm::Nginx),
        &[
            node("b", Some("10.0.0.2:11211"), 3),
            node("a", Some("[2001:db8::1]:80"), 1),
            node("c", None, 1).with_state(NodeState::Draining),
        ],
    );
    let plain = options(ProxyFormat::Nginx, ExportSettings::default());
    assert_eq!(
        render(&ring(), 7, &p, &plain).unwrap(),
        head(&p, 7, "nginx")
            + "upstream cache {\n    hash $http_x_ringd_key consistent;\n    \
               server [2001:db8::1]:80 weight=1;\n    server 10.0.0.2:11211 weight=3;\n}\n"
    );
    let set = options(
        ProxyFormat::Nginx,
        ExportSettings {
            upstream: Some("memc".into()),
            key: Some("$arg_key".into()),
            keepalive: Some(16),
            ..ExportSettings::default()
        },
    );
    assert_eq!(
        render(&ring(), 7, &p, &set).unwrap(),
        head(&p, 7, "nginx")
            + "upstream memc {\n    hash $arg_key consistent;\n    \
               server [2001:db8::1]:80 weight=1;\n    server 10.0.0.2:11211 weight=3;\n    \
               keepalive 16;\n}\n"
    );
}

#[test]
fn haproxy_writes_server_ids_the_hash_and_the_header() {
    let mut config = RingConfig::new(Algorithm::Haproxy);
    config.hash = HashFunction::Djb2;
    config.avalanche = false;
    let p = placement(
        config,
        &[
            node("s-1", Some("10.0.0.1:8080"), 2),
            node("s-2", Some("cache-2.internal:8080"), 1),
        ],
    );
    let o = options(ProxyFormat::Haproxy, ExportSettings::default());
    assert_eq!(
        render(&ring(), 3, &p, &o).unwrap(),
        head(&p, 3, "haproxy")
            + "backend cache\n    balance hash req.fhdr(X-Ringd-Key)\n    \
               hash-type consistent djb2\n    server s-1 10.0.0.1:8080 id 1 weight 2\n    \
               server s-2 cache-2.internal:8080 id 2 weight 1\n"
    );
    // Every active node needs an address HAProxy takes.
    for (address, detail) in [
        (None, "node `s-3` has no address"),
        (Some("[::1]:80"), "cannot be a HAProxy server"),
    ] {
        let p = placement(
            RingConfig::new(Algorithm::Haproxy),
            &[node("s-3", address, 1)],
        );
        let err = render(&ring(), 3, &p, &o).unwrap_err().to_string();
        assert!(err.contains(detail), "{err}");
    }
}

#[test]
fn twemproxy_writes_the_pool_with_names_and_the_tag() {
    let mut config = RingConfig::new(Algorithm::Twemproxy);
    config.hash_tag = Some(HashTag::new("{}").unwrap());
    let named = node("b", Some("10.0.0.2:6379"), 2).with_hash_key(HashKey::new("redis-b").unwrap());
    let p = placement(config, &[node("a", Some("10.0.0.1:11211"), 1), named]);
    let o = options(
        ProxyFormat::Twemproxy,
        ExportSettings {
            listen: Some("0.0.0.0:22122".into()),
            redis: Some(true),
            ..ExportSettings::default()
        },
    );
    assert_eq!(
        render(&ring(), 9, &p, &o).unwrap(),
        head(&p, 9, "twemproxy")
            + "cache:\n  listen: 0.0.0.0:22122\n  hash: fnv1a_64\n  distribution: ketama\n  \
               hash_tag: \"{}\"\n  auto_eject_hosts: false\n  redis: true\n  servers:\n   \
               - 10.0.0.1:11211:1\n   - 10.0.0.2:6379:2 redis-b\n"
    );
}

#[test]
fn a_ring_of_another_algorithm_or_without_servers_is_refused() {
    let p = placement(
        RingConfig::new(Algorithm::Ketama),
        &[node("a", Some("10.0.0.1:11211"), 1)],
    );
    let o = options(ProxyFormat::Nginx, ExportSettings::default());
    let err = render(&ring(), 1, &p, &o).unwrap_err();
    assert!(
        matches!(&err, ExportRefusal::Unexportable(m) if m.contains("places keys with `ketama`")),
        "{err}"
    );
    let empty = placement(RingConfig::new(Algorithm::Nginx), &[]);
    let err = render(&ring(), 1, &empty, &o).unwrap_err().to_string();
    assert!(err.contains("no active node"), "{err}");
}

#[test]
fn settings_that_do_not_belong_or_could_inject_are_refused() {
    let refused = [
        (
            ProxyFormat::Haproxy,
            ExportSettings {
                listen: Some("127.0.0.1:1".into()),
                ..ExportSettings::default()
            },
            "listen",
            "applies to twemproxy exports only",
        ),
        (
            ProxyFormat::Nginx,
            ExportSettings {
                upstream: Some("a;b".into()),
                ..ExportSettings::default()
            },
            "upstream",
            "1 to 64 characters",
        ),
        (
            ProxyFormat::Nginx,
            ExportSettings {
                key: Some("$a; proxy_pass x".into()),
                ..ExportSettings::default()
            },
            "key",
            "one nginx variable",
        ),
        (
            ProxyFormat::Nginx,
            ExportSettings {
                keepalive: Some(0),
                ..ExportSettings::default()
            },
            "keepalive",
            "from 1 to 65535",
        ),
        (
            ProxyFormat::Haproxy,
            ExportSettings {
                header: Some("X-Key)\n".into()),
                ..ExportSettings::default()
            },
            "header",
            "A-Z a-z 0-9 -",
        ),
        (
            ProxyFormat::Twemproxy,
            ExportSettings {
                pool: Some("p\n  evil: 1".into()),
                ..ExportSettings::default()
            },
            "pool",
            "1 to 64 characters",
        ),
        (
            ProxyFormat::Twemproxy,
            ExportSettings {
                listen: Some("127.0.0.1".into()),
                ..ExportSettings::default()
            },
            "listen",
            "`host:port`",
        ),
    ];
    for (format, settings, field, detail) in refused {
        match ExportOptions::check(format, &ring(), settings) {
            Err(ExportRefusal::Invalid { field: f, message }) => {
                assert_eq!(f, field);
                assert!(message.contains(detail), "{message}");
            }
            other => panic!("{field}: {other:?}"),
        }
    }
    assert!("squid".parse::<ProxyFormat>().is_err());
    assert_eq!(
        "haproxy".parse::<ProxyFormat>().unwrap(),
        ProxyFormat::Haproxy
    );
}
