//! nutcracker (twemproxy 0.5.0) in front of real memcached processes must
//! place every key on the server a `twemproxy` ring names as its owner.
//!
//! Each node set gets fresh memcached processes on loopback ports and a
//! nutcracker started in the foreground with the pool rendered from the
//! placement. Every key is `set` through nutcracker, then each memcached
//! is asked directly which keys it holds: each key must be on exactly one,
//! the owner. Keys run up to memcached's 250 bytes and carry bytes above
//! 0x7F (which several of nutcracker's hashes sign-extend) and `{tags}`.
//!
//! `.ci/setup --test` installs both programs.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::process::Command;

use ringd::placement::{
    Address, Algorithm, HashFunction, HashKey, HashTag, Node, NodeId, Placement, RingConfig, Weight,
};

use ringd::ring::proxy_config::{self, ExportOptions, ExportSettings, ProxyFormat};
use ringd::ring::RingName;

use super::backends::{host_with_11211_free, memcached, Memcache};
use super::loopback::{free_port, one_test_at_a_time, Rng, Running};

/// Keys sent through nutcracker per node set.
pub(super) const KEYS: usize = 20_000;

/// A server of a node set: where its memcached listens, its weight, and
/// the name written after the weight, if any (the node's `hash_key`).
struct Server {
    addr: SocketAddr,
    weight: u32,
    name: Option<String>,
}

/// The nutcracker pool for `p`, from ringd's exporter: its active nodes
/// in id order, each as `host:port:weight [name]`.
fn pool_config(p: &Placement, listen: SocketAddr) -> String {
    let ring = RingName::new("ringd").expect("a ring name");
    let settings = ExportSettings {
        listen: Some(listen.to_string()),
        ..ExportSettings::default()
    };
    let options = ExportOptions::check(ProxyFormat::Twemproxy, &ring, settings).expect("settings");
    proxy_config::render(&ring, 1, p, &options).expect("an exportable placement")
}

fn nodes_of(servers: &[Server]) -> Vec<Node> {
    servers
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut n = Node::new(NodeId::new(format!("m-{i:02}")).unwrap())
                .with_weight(Weight::new(s.weight.into()).unwrap())
                .with_address(Address::new(s.addr.to_string()).unwrap());
            if let Some(name) = &s.name {
                n = n.with_hash_key(HashKey::new(name.as_str()).unwrap());
            }
            n
        })
        .collect()
}

/// The keys of one node set: short and long (to memcached's 250 bytes),
/// ASCII and bytes above 0x7F, with and without `{tags}`; never a space or
/// a control byte, which the text protocol cannot carry.
pub(super) fn keys(seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng::new(seed);
    let mut next = move || rng.next_u64();
    let printable = |r: u64, high: bool| -> u8 {
        if high {
            0x80 + (r % 128) as u8
        } else {
            0x21 + (r % 94) as u8
        }
    };
    let mut keys: Vec<Vec<u8>> = Vec::with_capacity(KEYS);
    let mut seen = std::collections::HashSet::new();
    while keys.len() < KEYS {
        let i = keys.len();
        let r = next();
        let len = match i % 5 {
            0 => 1 + (r % 8) as usize,
            1 => 9 + (r % 40) as usize,
            2 => 200 + (r % 51) as usize,
            _ => 1 + (r % 250) as usize,
        };
        let mut k: Vec<u8> = (0..len)
            .map(|_| {
                let r = next();
                printable(r >> 8, i.is_multiple_of(3) && r.is_multiple_of(4))
            })
            .collect();
        if i % 4 == 1 && len > 6 {
            // A tag somewhere inside, sometimes empty (then the whole key
            // is hashed).
            let at = (next() % (len as u64 - 4)) as usize;
            k[at] = b'{';
            let close = at + 1 + (next() % 4) as usize;
            k[close.min(len - 1)] = b'}';
        }
        if seen.insert(k.clone()) {
            keys.push(k);
        }
    }
    keys
}

/// Starts the servers and nutcracker, sends every key through it and
/// panics on the first key that is not on ringd's owner.
fn check(label: &str, config: &RingConfig, servers: &[Server], keys: &[Vec<u8>]) {
    let nodes = nodes_of(servers);
    let p = Placement::build(config, &nodes).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Each process is killed when dropped, also when an assertion fails.
    let mut processes = Vec::new();
    for (i, s) in servers.iter().enumerate() {
        processes.push(memcached(
            s.addr,
            &dir.path().join(format!("memcached-{i}.log")),
        ));
    }
    let listen = SocketAddrV4::new(Ipv4Addr::LOCALHOST, free_port(Ipv4Addr::LOCALHOST));
    let conf = dir.path().join("nutcracker.yml");
    std::fs::write(&conf, pool_config(&p, listen.into())).unwrap();
    let stats = free_port(Ipv4Addr::LOCALHOST).to_string();
    let mut cmd = Command::new("nutcracker");
    cmd.arg("-c")
        .arg(&conf)
        .args(["-a", "127.0.0.1", "-s", &stats]);
    let log = dir.path().join("nutcracker.log");
    let mut nutcracker = Running::start("nutcracker (see .ci/setup)", cmd, &log);
    nutcracker.wait_listening(&[listen], &log);
    processes.push(nutcracker);
    let listen = SocketAddr::from(listen);

    Memcache::connect(listen).set_all(keys);
    let index: HashMap<&[u8], usize> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_slice(), i))
        .collect();
    let mut found: Vec<Option<usize>> = vec![None; keys.len()];
    for (server, s) in servers.iter().enumerate() {
        for k in Memcache::connect(s.addr).held(keys) {
            let i = index[k.as_slice()];
            assert_eq!(found[i], None, "{label}: a key on two servers");
            found[i] = Some(server);
        }
    }
    for (k, got) in keys.iter().zip(found) {
        let owner = p.owner(k).expect("an owner");
        // Nodes are made in server order (ids m-00, m-01, … sort the same).
        let expected = nodes.iter().position(|n| &n.id == owner);
        assert_eq!(
            got,
            expected,
            "{label}: key {:?} (hash {}) reached server {got:?}, ringd says {owner}",
            String::from_utf8_lossy(k),
            p.key_hash(k)
        );
    }
    drop(processes);
    eprintln!("{label}: {} keys, every one on ringd's owner", keys.len());
}

fn config(hash: HashFunction, tag: Option<&str>) -> RingConfig {
    let mut c = RingConfig::new(Algorithm::Twemproxy);
    c.hash = hash;
    c.hash_tag = tag.map(|t| HashTag::new(t).unwrap());
    c
}

/// How a server is written: on port 11211 of its own loopback address
/// without a name (nutcracker names it by the host alone), on another
/// port without a name (named `host:port`), or on another port with a
/// name (the node's `hash_key`).
#[derive(Clone, Copy)]
enum Kind {
    Default,
    Port,
    Named,
}

const EVERY_KIND: [Kind; 3] = [Kind::Default, Kind::Port, Kind::Named];

fn servers(count: usize, weight: impl Fn(usize) -> u32, kinds: &[Kind]) -> Vec<Server> {
    let mut next_host = 2;
    let loopback_port = || SocketAddr::from((Ipv4Addr::LOCALHOST, free_port(Ipv4Addr::LOCALHOST)));
    (0..count)
        .map(|i| {
            let (addr, name) = match kinds[i % kinds.len()] {
                Kind::Default => {
                    let ip = host_with_11211_free(next_host);
                    next_host = ip.octets()[3] + 1;
                    (SocketAddr::from((ip, 11211)), None)
                }
                Kind::Port => (loopback_port(), None),
                Kind::Named => (loopback_port(), Some(format!("cache-{i}.example"))),
            };
            Server {
                addr,
                weight: weight(i),
                name,
            }
        })
        .collect()
}

fn run(label: &str, config: RingConfig, servers: Vec<Server>, seed: u64) {
    check(label, &config, &servers, &keys(seed));
}

#[test]
fn one_server() {
    // One test at a time: node sets share port 11211 on the loopback hosts.
    let _one = one_test_at_a_time();
    let s = servers(1, |_| 3, &[Kind::Default]);
    run("1 server", config(HashFunction::Fnv1a64, None), s, 1);
}

#[test]
fn two_servers() {
    // One test at a time: node sets share port 11211 on the loopback hosts.
    let _one = one_test_at_a_time();
    let s = servers(2, |i| [1, 3][i], &[Kind::Port, Kind::Named]);
    run("2 servers, md5", config(HashFunction::Md5, None), s, 2);
}

#[test]
fn seven_servers_every_kind_with_a_tag() {
    // One test at a time: node sets share port 11211 on the loopback hosts.
    let _one = one_test_at_a_time();
    let s = servers(7, |i| i as u32 + 1, &EVERY_KIND);
    run(
        "7 servers, md5, {}",
        config(HashFunction::Md5, Some("{}")),
        s,
        3,
    );
}

#[test]
fn twenty_five_equal_servers_on_port_11211() {
    // One test at a time: node sets share port 11211 on the loopback hosts.
    let _one = one_test_at_a_time();
    // nutcracker gives each 156 points here, where libketama gives 160.
    let s = servers(25, |_| 1, &[Kind::Default]);
    // The control: libketama (ringd's `ketama`) on the same names and md5
    // places some of these keys elsewhere, so agreeing with nutcracker
    // below is agreeing with what only `twemproxy` computes.
    let md5 = config(HashFunction::Md5, None);
    let twemproxy = Placement::build(&md5, &nodes_of(&s)).unwrap();
    let named: Vec<Node> = nodes_of(&s)
        .into_iter()
        .zip(&s)
        .map(|(n, server)| n.with_hash_key(HashKey::new(server.addr.ip().to_string()).unwrap()))
        .collect();
    let ketama = Placement::build(&RingConfig::new(Algorithm::Ketama), &named).unwrap();
    let keys = keys(4);
    let differ = keys
        .iter()
        .filter(|k| twemproxy.owner(k) != ketama.owner(k))
        .count();
    assert!(
        differ > KEYS / 200,
        "ketama and twemproxy differ on only {differ} keys"
    );
    eprintln!("25 servers: libketama would place {differ} of {KEYS} keys elsewhere");
    {
        check("25 servers on 11211, md5", &md5, &s, &keys);
    }
    run(
        "25 servers on 11211",
        config(HashFunction::Fnv1a64, None),
        s,
        4,
    );
}

#[test]
fn forty_servers_weights_one_to_ten() {
    // One test at a time: node sets share port 11211 on the loopback hosts.
    let _one = one_test_at_a_time();
    let s = servers(40, |i| (i % 10) as u32 + 1, &EVERY_KIND);
    run(
        "40 servers, crc32a, {}",
        config(HashFunction::Crc32a, Some("{}")),
        s,
        5,
    );
}

#[test]
fn every_other_hash() {
    // One test at a time: node sets share port 11211 on the loopback hosts.
    let _one = one_test_at_a_time();
    let sets = [
        (HashFunction::OneAtATime, 10, Some("{}")),
        (HashFunction::Murmur, 13, None),
        (HashFunction::Jenkins, 16, Some("{}")),
        (HashFunction::Hsieh, 20, None),
        (HashFunction::Fnv164, 9, Some("<>")),
        (HashFunction::Fnv1a32, 11, None),
        (HashFunction::Fnv132, 5, Some("{}")),
        (HashFunction::Fnv1a64, 30, Some("{}")),
    ];
    for (i, (hash, count, tag)) in sets.into_iter().enumerate() {
        let s = servers(count, |j| ((j * 7 + i) % 10) as u32 + 1, &EVERY_KIND);
        let label = format!("{count} servers, {hash}, tag {tag:?}");
        run(&label, config(hash, tag), s, 10 + i as u64);
    }
}

#[test]
fn equal_points_go_to_the_name_that_sorts_first() {
    // One test at a time: node sets share port 11211 on the loopback hosts.
    let _one = one_test_at_a_time();
    // `tie-184-k29` word 3 and `tie-434-k4` word 1 are both 1310727539:
    // nutcracker sorts its servers by name, so the arc ending there is
    // `tie-184`'s, although its node id sorts last.
    const TIE: u64 = 1_310_727_539;
    let s = servers(2, |_| 1, &[Kind::Named]);
    let mut nodes = nodes_of(&s);
    nodes[0].hash_key = Some(HashKey::new("tie-434").unwrap());
    nodes[1].hash_key = Some(HashKey::new("tie-184").unwrap());
    let c = config(HashFunction::Fnv1a64, None);
    let p = Placement::build(&c, &nodes).unwrap();
    let points: Vec<(u64, &NodeId)> = p.points().unwrap().collect();
    let at = points.iter().position(|&(pos, _)| pos == TIE).unwrap();
    assert_eq!(points[at + 1].0, TIE, "two points at {TIE}");
    assert_eq!(points[at].1.as_str(), "m-01", "tie-184 first");
    let before = points[at - 1].0;
    // Keys whose hash falls in the tied arc, and as many others.
    let mut keys: Vec<Vec<u8>> = Vec::new();
    let mut i = 0u64;
    let mut tied = 0;
    while tied < 300 || keys.len() < KEYS {
        let k = format!("tie-probe-{i}").into_bytes();
        i += 1;
        let h = p.key_hash(&k);
        if h > before && h <= TIE {
            tied += 1;
            keys.push(k);
        } else if keys.len() < KEYS {
            keys.push(k);
        }
    }
    let s: Vec<Server> = s
        .into_iter()
        .zip(["tie-434", "tie-184"])
        .map(|(s, name)| Server {
            name: Some(name.into()),
            ..s
        })
        .collect();
    check("tied points", &c, &s, &keys);
}
