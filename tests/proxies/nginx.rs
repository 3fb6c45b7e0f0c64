//! The real nginx against ringd's `nginx` placement, key by key: an nginx
//! proxy with one `hash $http_x_ringd_key consistent` upstream per node
//! set, written from ringd's placement, in front of a second nginx whose
//! servers each answer with their own address. Every key's answer must
//! come from the node ringd names as its owner.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::{Ipv4Addr, SocketAddrV4};

use ringd::placement::nginx::server_points;
use ringd::placement::{Address, Algorithm, Node, NodeId, Placement, RingConfig, Weight};
use ringd::ring::proxy_config::{self, ExportOptions, ExportSettings, ProxyFormat};
use ringd::ring::RingName;

use super::backends::nginx;
use super::loopback::{free_port, is_free, one_test_at_a_time, KeyClient, Rng, Running};

/// Keys sent through each node set's upstream.
const KEYS_PER_SET: usize = 20_000;

/// The upstream block of a node set, from ringd's exporter: the active
/// nodes in id order (the order that decides equal points), each with its
/// weight, and keep-alive connections to them.
fn upstream_block(name: &str, placement: &Placement) -> String {
    let ring = RingName::new(name).expect("a ring name");
    let settings = ExportSettings {
        keepalive: Some(16),
        ..ExportSettings::default()
    };
    let options = ExportOptions::check(ProxyFormat::Nginx, &ring, settings).expect("settings");
    proxy_config::render(&ring, 1, placement, &options).expect("an exportable placement")
}

/// One node set: `(id, host, port, weight)` per node.
struct NodeSet {
    name: &'static str,
    nodes: Vec<(String, Ipv4Addr, u16, u32)>,
}

impl NodeSet {
    fn placement(&self) -> Placement {
        let nodes: Vec<Node> = self
            .nodes
            .iter()
            .map(|(id, host, port, weight)| {
                Node::new(NodeId::new(id.as_str()).expect("an id"))
                    .with_weight(Weight::new((*weight).into()).expect("a weight"))
                    .with_address(Address::new(format!("{host}:{port}")).expect("an address"))
            })
            .collect();
        Placement::build(&RingConfig::new(Algorithm::Nginx), &nodes).expect("a placement")
    }
}

/// `count` nodes on `hosts` (127.0.0.x), ports from the OS, weights
/// cycling through 1 to 10 from `first_weight`.
fn spread(name: &'static str, count: usize, hosts: u8, first_weight: u32) -> NodeSet {
    let nodes = (0..count)
        .map(|i| {
            let host = Ipv4Addr::new(127, 0, 0, 1 + (i % usize::from(hosts)) as u8);
            let weight = (first_weight + i as u32 - 1) % 10 + 1;
            (format!("cache-{i:02}"), host, free_port(host), weight)
        })
        .collect();
    NodeSet { name, nodes }
}

/// Twelve nodes on port 11211, one per host 127.0.1.x, as memcached
/// fleets are written.
fn on_11211() -> NodeSet {
    let nodes = (1..=12u8)
        .map(|i| {
            let host = Ipv4Addr::new(127, 0, 1, i);
            assert!(is_free(host, 11211), "{host}:11211 is taken");
            (format!("mc-{i:02}"), host, 11211, u32::from(i % 4 + 1))
        })
        .collect();
    NodeSet {
        name: "port_11211",
        nodes,
    }
}

/// Two servers with an equal point, found among hosts 127.0.x.y on one
/// port, and three others: nginx keeps the point of the server listed
/// first, so the arc before it is that server's.
fn colliding() -> (NodeSet, u32) {
    let port = free_port(Ipv4Addr::LOCALHOST);
    let mut points: Vec<(u32, u16)> = Vec::new();
    for x in 2..=255u16 {
        let host = |y: u16| format!("127.0.{}.{}:{port}", x, y);
        for y in 1..=254u16 {
            points.extend(server_points(&host(y), 1).map(|p| (p, (x << 8) | y)));
        }
        points.sort_unstable();
        if let Some(w) = points
            .windows(2)
            .find(|w| w[0].0 == w[1].0 && w[0].1 != w[1].1)
        {
            let at = w[0].0;
            let [a, b] = [w[0].1, w[1].1].map(|h| Ipv4Addr::new(127, 0, (h >> 8) as u8, h as u8));
            // Ids put b first in node order, so the later address wins.
            let mut nodes = vec![
                ("tie-1".to_owned(), b, port, 1),
                ("tie-2".to_owned(), a, port, 1),
            ];
            for (i, w) in [2u32, 3, 1].into_iter().enumerate() {
                let host = Ipv4Addr::new(127, 0, 0, 1);
                nodes.push((format!("tie-{}", i + 3), host, free_port(host), w));
            }
            return (
                NodeSet {
                    name: "equal_points",
                    nodes,
                },
                at,
            );
        }
    }
    panic!("no equal points among 64,770 servers");
}

/// A key as nginx passes it to the hash untouched: 1 to 2,000 bytes of
/// anything but NUL, CR and LF (which end a header line), bytes above
/// 0x7F included, with no space or tab at either end (nginx trims them).
pub(super) fn key(rng: &mut Rng) -> Vec<u8> {
    let len = match rng.below(10) {
        0 => 200 + rng.below(1_800),
        1..=3 => 1 + rng.below(8),
        _ => 8 + rng.below(60),
    } as usize;
    let byte = |rng: &mut Rng, edge: bool| loop {
        let b = match rng.below(3) {
            0 => 0x80 + rng.below(0x80) as u8,
            _ => 0x21 + rng.below(0x5E) as u8,
        };
        let b = if rng.below(50) == 0 {
            rng.below(256) as u8
        } else {
            b
        };
        let bad = matches!(b, 0 | b'\r' | b'\n') || (edge && matches!(b, b' ' | b'\t'));
        if !bad {
            return b;
        }
    };
    (0..len)
        .map(|i| byte(rng, i == 0 || i + 1 == len))
        .collect()
}

/// The keys sent through one set: `KEYS_PER_SET` random ones, and when
/// `arc_end` is given, 200 more whose hash falls in the arc that ends at
/// that point.
fn keys_for(placement: &Placement, seed: u64, arc_end: Option<u32>) -> Vec<Vec<u8>> {
    let mut rng = Rng::new(seed);
    let mut keys: Vec<Vec<u8>> = (0..KEYS_PER_SET).map(|_| key(&mut rng)).collect();
    if let Some(end) = arc_end {
        let points: Vec<u64> = placement
            .points()
            .expect("a circle")
            .map(|(p, _)| p)
            .collect();
        let i = points.binary_search(&u64::from(end)).expect("the point");
        let start = if i == 0 { 0 } else { points[i - 1] + 1 };
        let mut found = 0;
        while found < 200 {
            let k = key(&mut rng);
            let h = placement.key_hash(&k);
            if (start..=u64::from(end)).contains(&h) {
                keys.push(k);
                found += 1;
            }
        }
    }
    keys
}

#[test]
fn nginx_places_every_key_where_ringd_says() {
    let _one = one_test_at_a_time();
    let dir = tempfile::tempdir().expect("a temp dir");
    let (equal, at) = colliding();
    let sets = vec![
        spread("one", 1, 1, 3),
        spread("five", 5, 1, 1),
        spread("seventeen", 17, 4, 4),
        spread("forty", 40, 8, 1),
        on_11211(),
        equal,
    ];
    let placements: Vec<Placement> = sets.iter().map(NodeSet::placement).collect();

    // The backends: one server per address, answering with it.
    let mut backends = String::new();
    let mut listens = Vec::new();
    for set in &sets {
        for (_, host, port, _) in &set.nodes {
            let addr = SocketAddrV4::new(*host, *port);
            writeln!(
                backends,
                "    server {{ listen {addr}; location / {{ return 200 \"{addr}\"; }} }}"
            )
            .expect("a String");
            listens.push(addr);
        }
    }
    let (cmd, log) = nginx(dir.path(), "backends", &backends);
    let mut backend_nginx = Running::start("backend nginx", cmd, &log);
    backend_nginx.wait_listening(&listens, &dir.path().join("backends/error.log"));

    // The proxy: one upstream and one listener per node set.
    let mut proxy = String::new();
    let mut fronts = Vec::new();
    for (set, placement) in sets.iter().zip(&placements) {
        proxy.push_str(&upstream_block(set.name, placement));
        let front = SocketAddrV4::new(Ipv4Addr::LOCALHOST, free_port(Ipv4Addr::LOCALHOST));
        writeln!(
            proxy,
            "    server {{ listen {front}; location / {{ proxy_pass http://{}; \
             proxy_http_version 1.1; proxy_set_header Connection \"\"; \
             proxy_next_upstream off; }} }}",
            set.name
        )
        .expect("a String");
        fronts.push(front);
    }
    let (cmd, log) = nginx(dir.path(), "proxy", &proxy);
    let mut proxy_nginx = Running::start("proxy nginx", cmd, &log);
    proxy_nginx.wait_listening(&fronts, &dir.path().join("proxy/error.log"));

    let mut report = Vec::new();
    for (i, ((set, placement), front)) in sets.iter().zip(&placements).zip(&fronts).enumerate() {
        let arc = (set.name == "equal_points").then_some(at);
        let keys = keys_for(placement, 0x6e67_696e_7800 + i as u64, arc);
        let by_address: BTreeMap<String, &str> = set
            .nodes
            .iter()
            .map(|(id, host, port, _)| (format!("{host}:{port}"), id.as_str()))
            .collect();
        let chunks: Vec<&[Vec<u8>]> = keys.chunks(keys.len().div_ceil(4)).collect();
        let wrong: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = chunks
                .iter()
                .map(|chunk| {
                    let by_address = &by_address;
                    s.spawn(move || {
                        let mut client = KeyClient::new(*front, "X-Ringd-Key");
                        let mut wrong = Vec::new();
                        for k in chunk.iter() {
                            let answered = client.ask(k);
                            let owner = placement.owner(k).expect("an owner").as_str();
                            if by_address.get(&answered).copied() != Some(owner) {
                                wrong.push(format!(
                                    "key of {} bytes {:?}… (crc32 {:#010x}): nginx chose {answered}, ringd {owner}",
                                    k.len(),
                                    String::from_utf8_lossy(&k[..k.len().min(24)]),
                                    placement.key_hash(k)
                                ));
                            }
                        }
                        wrong
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("a client thread"))
                .collect()
        });
        report.push(format!(
            "{}: {} keys, {} disagreements",
            set.name,
            keys.len(),
            wrong.len()
        ));
        assert!(
            wrong.is_empty(),
            "{}: {} of {} keys placed differently, first: {:#?}",
            set.name,
            wrong.len(),
            keys.len(),
            &wrong[..wrong.len().min(5)]
        );
    }
    println!("{}", report.join("\n"));
}
