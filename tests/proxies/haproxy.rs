//! HAProxy 2.6 against ringd's `haproxy` mode, key by key.
//!
//! One ring goes through a sequence of versions (one server, forty at
//! weights 1 to 10, removals that leave gaps in the server ids, drained
//! nodes, a replacement through `hash_key` that takes over an id, and
//! every key hash with and without avalanche). For each version the test
//! renders HAProxy's backend from the snapshot, starts the real `haproxy`
//! on loopback in front of one loopback HTTP server per node (each answers
//! its own node id), sends 20,000 keys in an `X-Key` header and checks
//! that every answer comes from the owner ringd names. A control renders
//! the gapped set without ids, so HAProxy numbers servers by position, and
//! must disagree: the check sees the ids.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::process::Command;
use std::sync::Mutex;

use ringd::placement::{HashFunction, HashKey, NodeId, NodeState, RingConfigSpec, Weight};
use ringd::ring::proxy_config::{self, ExportOptions, ExportSettings, ProxyFormat};
use ringd::ring::{ChangeOp, NodeRecord, RequestedOp, RingName, Role, Snapshot};
use time::OffsetDateTime;

use super::loopback::{free_port, one_test_at_a_time, KeyClient, Rng, Running};

const KEYS_PER_SET: usize = 20_000;

/// The backend section HAProxy gets for a version, from ringd's exporter:
/// its active nodes with their stable ids and weights, hashing the whole
/// `X-Key` header value. `with_ids: false` is the control that drops the
/// ids and leaves HAProxy to number the servers by position.
fn backend_section(ring: &Ring, with_ids: bool) -> String {
    let settings = ExportSettings {
        backend: Some("ring".into()),
        header: Some("X-Key".into()),
        ..ExportSettings::default()
    };
    let name = &ring.snapshot.ring;
    let options = ExportOptions::check(ProxyFormat::Haproxy, name, settings).expect("settings");
    let text = proxy_config::render(name, ring.snapshot.version, &ring.placement, &options)
        .expect("an exportable version");
    if with_ids {
        return text;
    }
    text.lines()
        .map(|line| match line.split_once(" id ") {
            // `server NAME ADDRESS id N weight W` without `id N`.
            Some((head, tail)) => {
                let weight = tail.split_once(' ').map_or("", |(_, w)| w);
                format!("{head} {weight}\n")
            }
            None => format!("{line}\n"),
        })
        .collect()
}

/// The port of the loopback HTTP server of node `id`, which answers every
/// request with the id; started on first use and kept for the whole test.
fn backend_port(id: &str) -> u16 {
    static PORTS: Mutex<BTreeMap<String, u16>> = Mutex::new(BTreeMap::new());
    let mut ports = PORTS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&p) = ports.get(id) {
        return p;
    }
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("an address").port();
    let name = id.to_owned();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let name = name.clone();
            std::thread::spawn(move || serve(conn, &name));
        }
    });
    ports.insert(id.to_owned(), port);
    port
}

/// Answers GETs on one connection until the peer closes it.
fn serve(conn: TcpStream, name: &str) {
    let mut out = conn.try_clone().expect("a second handle");
    let mut reader = BufReader::new(conn);
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{name}",
        name.len()
    );
    let mut line = Vec::new();
    loop {
        // The request head ends with an empty line; GETs carry no body.
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) if line == b"\r\n" => break,
                Ok(_) => {}
            }
        }
        if out.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

/// `haproxy -db` on a config file in a temporary directory, killed when
/// dropped, however the test ends.
struct Haproxy {
    front: SocketAddrV4,
    _process: Running,
    _dir: tempfile::TempDir,
}

impl Haproxy {
    fn start(backend: &str) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let front = SocketAddrV4::new(Ipv4Addr::LOCALHOST, free_port(Ipv4Addr::LOCALHOST));
        let config = format!(
            "global\n  maxconn 256\ndefaults\n  mode http\n  timeout connect 5s\n  \
             timeout client 30s\n  timeout server 30s\n\
             frontend keys\n  bind {front}\n  default_backend ring\n{backend}"
        );
        let path = dir.path().join("haproxy.cfg");
        std::fs::write(&path, config).expect("the config is written");
        let log = dir.path().join("haproxy.log");
        let mut command = Command::new("haproxy");
        command.arg("-db").arg("-f").arg(&path);
        let mut process = Running::start("haproxy (see .ci/setup)", command, &log);
        process.wait_listening(&[front], &log);
        Self {
            front,
            _process: process,
            _dir: dir,
        }
    }

    /// The backend that answers each key, over one keep-alive connection
    /// (HAProxy balances every request of it on its own).
    fn answers(&self, keys: &[Vec<u8>]) -> Vec<String> {
        let mut client = KeyClient::new(self.front, "X-Key");
        keys.iter().map(|key| client.ask(key)).collect()
    }
}

/// Keys a header carries raw: 1 to 200 bytes (some up to 2,000) of
/// visible ASCII, spaces, tabs, commas and bytes 0x80 to 0xFF, never
/// starting or ending with white space (HTTP trims it).
pub(super) fn keys(seed: u64, count: usize) -> Vec<Vec<u8>> {
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|i| {
            let len = if i % 50 == 0 {
                200 + rng.below(1800)
            } else {
                1 + rng.below(200)
            };
            (0..len)
                .map(|j| match rng.below(10) {
                    0 | 1 => 0x80 + rng.below(0x80) as u8,
                    2 if j > 0 && j + 1 < len => [b' ', b'\t', b','][rng.below(3) as usize],
                    _ => 0x21 + rng.below(0x5e) as u8,
                })
                .collect()
        })
        .collect()
}

/// The ring's versions, built by the ring layer that numbers the nodes.
struct Ring {
    snapshot: Snapshot,
    placement: ringd::placement::Placement,
}

impl Ring {
    fn new() -> Self {
        let config = serde_json::from_str(r#"{"algorithm": "haproxy"}"#).expect("a config");
        let (snapshot, placement) = Snapshot::first(
            RingName::new("proxied").expect("a name"),
            config,
            Role::Admin,
            now(),
        )
        .expect("version 1");
        Self {
            snapshot,
            placement,
        }
    }

    fn change(&mut self, ops: Vec<RequestedOp>) {
        let proposal = self
            .snapshot
            .propose(&self.placement, ops, None, Role::Admin, now())
            .expect("the change is valid")
            .expect("the change changes something");
        self.snapshot = proposal.snapshot;
        self.placement = proposal.placement;
    }
}

fn now() -> OffsetDateTime {
    OffsetDateTime::UNIX_EPOCH
}

/// A node at its own loopback backend.
fn node(id: &str, weight: u64) -> NodeRecord {
    let mut n = NodeRecord::new(NodeId::new(id).expect("an id"));
    n.weight = Weight::new(weight).expect("a weight");
    n.address = Some(format!("127.0.0.1:{}", backend_port(id)));
    n
}

fn upsert(n: NodeRecord) -> RequestedOp {
    ChangeOp::Upsert { node: n }.into()
}

fn remove(id: &str) -> RequestedOp {
    ChangeOp::Remove {
        id: NodeId::new(id).expect("an id"),
    }
    .into()
}

fn config(hash: HashFunction, avalanche: bool) -> RequestedOp {
    let spec = RingConfigSpec {
        hash: Some(hash),
        avalanche: Some(avalanche),
        ..RingConfigSpec::default()
    };
    RequestedOp::UpdateConfig(spec, None)
}

/// Keys whose answer differs from ringd's owner, with the first few.
fn disagreements(ring: &Ring, with_ids: bool, seed: u64) -> (usize, Vec<String>) {
    let proxy = Haproxy::start(&backend_section(ring, with_ids));
    let keys = keys(seed, KEYS_PER_SET);
    let answers = proxy.answers(&keys);
    let mut wrong = Vec::new();
    for (key, answer) in keys.iter().zip(&answers) {
        let owner = ring.placement.owner(key).expect("an owner");
        if owner.as_str() != answer {
            wrong.push(format!("{key:?}: haproxy {answer}, ringd {owner}"));
        }
    }
    (wrong.len(), wrong.into_iter().take(5).collect())
}

/// Asserts that HAProxy agrees with ringd on every key of a version.
fn check(ring: &Ring, checked: &mut usize, what: &str, seed: u64) {
    let (count, first) = disagreements(ring, true, seed);
    assert_eq!(
        count, 0,
        "{what}: {count} of {KEYS_PER_SET} keys disagree: {first:#?}"
    );
    *checked += KEYS_PER_SET;
}

#[test]
fn haproxy_places_every_key_where_ringd_says() {
    let _one = one_test_at_a_time();
    let mut ring = Ring::new();
    let mut checked = 0;

    ring.change(vec![upsert(node("s-01", 3))]);
    check(&ring, &mut checked, "one server", 1);

    ring.change(
        (2..=40)
            .map(|i| upsert(node(&format!("s-{i:02}"), (i - 1) % 10 + 1)))
            .collect(),
    );
    check(&ring, &mut checked, "40 servers, weights 1 to 10", 2);

    // Removals leave gaps in the ids; two nodes drain (HAProxy's config
    // holds the active nodes only) and two are re-weighted.
    let mut ops: Vec<RequestedOp> = ["s-03", "s-07", "s-08", "s-21", "s-40"].map(remove).into();
    for id in ["s-11", "s-30"] {
        let mut n = node(id, 1);
        n.state = NodeState::Draining;
        ops.push(upsert(n));
    }
    ops.extend([upsert(node("s-02", 10)), upsert(node("s-05", 1))]);
    ring.change(ops);
    let ids = &ring.snapshot.server_ids.as_ref().expect("ids").ids;
    assert_eq!(
        ids[&NodeId::new("s-09").expect("an id")],
        9,
        "ids survive removals"
    );
    check(
        &ring,
        &mut checked,
        "after removals, drains and re-weights",
        3,
    );

    // The control: the same set without `id` lines. HAProxy then numbers
    // servers by position, so keys move, and the check must see it.
    let (count, _) = disagreements(&ring, false, 3);
    assert!(
        count > KEYS_PER_SET / 20,
        "without ids only {count} keys moved: the check is blind"
    );

    // s-10 replaced by spare-10 (hash_key s-10) in one change: it takes
    // over id 10; two new servers take 41 and 42.
    let mut spare = node("spare-10", 10);
    spare.hash_key = Some(HashKey::new("s-10").expect("a hash key"));
    ring.change(vec![
        remove("s-10"),
        upsert(spare),
        upsert(node("s-41", 4)),
        upsert(node("s-42", 7)),
    ]);
    let ids = &ring.snapshot.server_ids.as_ref().expect("ids").ids;
    assert_eq!(ids[&NodeId::new("spare-10").expect("an id")], 10);
    assert_eq!(ids[&NodeId::new("s-42").expect("an id")], 42);
    check(
        &ring,
        &mut checked,
        "a replacement through hash_key, and two more",
        4,
    );

    // Every key hash, with and without avalanche, on the same servers.
    let mut seed = 5;
    for hash in HashFunction::HAPROXY {
        for avalanche in [false, true] {
            ring.change(vec![config(hash, avalanche)]);
            check(
                &ring,
                &mut checked,
                &format!("{hash}, avalanche {avalanche}"),
                seed,
            );
            seed += 1;
        }
    }
    eprintln!("haproxy: {checked} keys through HAProxy, 0 disagreements");
}
