//! `ringd node join` as a child process against a real ringd: the node
//! appears healthy, SIGTERM leaves at once with exit 0, SIGKILL leaves it
//! to turn unhealthy after its TTL, refused input exits 2 with the
//! message; and `node list`'s health columns.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::api::TestApi;
use crate::support::cli::{check, check_failure, command, golden, ok, ringd};
use crate::support::membership::decider_looked_again;
use crate::support::ringd::Ringd;

/// Far above any wait these tests expect, so only a broken join trips it.
const LIMIT: Duration = Duration::from_secs(10);

/// A running `ringd node join`, and its stderr line by line.
struct Join {
    child: Child,
    lines: Receiver<String>,
}

impl Join {
    fn start(url: &str, args: &[&str]) -> Self {
        let mut all = vec!["node", "join"];
        all.extend_from_slice(args);
        let mut child = command(url, &all).spawn().expect("spawn ringd node join");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Self { child, lines }
    }

    /// The next stderr line, within [`LIMIT`].
    fn line(&self) -> String {
        self.lines.recv_timeout(LIMIT).expect("a line on stderr")
    }

    fn signal(&self, name: &str) {
        let status = Command::new("sh")
            .args(["-c", &format!("kill -{name} {}", self.child.id())])
            .status()
            .expect("run sh");
        assert!(status.success(), "kill -{name} failed");
    }

    /// Waits for the exit, within [`LIMIT`].
    fn wait(&mut self) -> std::process::ExitStatus {
        let until = Instant::now() + LIMIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(Instant::now() < until, "ringd node join did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Join {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Node `id`'s entry in `ringd -o json node list cache`.
fn entry(u: &str, id: &str) -> Option<Value> {
    let list: Value =
        serde_json::from_str(&ok(u, &["-o", "json", "node", "list", "cache"])).unwrap();
    list["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == id)
        .cloned()
}

/// Polls until node `id` has `health`, within [`LIMIT`]; returns its entry.
fn wait_health(u: &str, id: &str, health: &str) -> Value {
    let until = Instant::now() + LIMIT;
    loop {
        let e = entry(u, id);
        if let Some(e) = e.as_ref().filter(|e| e["health"] == health) {
            return e.clone();
        }
        assert!(Instant::now() < until, "node {id} not {health}: {e:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An RFC 3339 timestamp of a node entry.
fn at(v: &Value) -> time::OffsetDateTime {
    let text = v.as_str().unwrap_or_else(|| panic!("not a timestamp: {v}"));
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).unwrap()
}

/// From a leased node's last heartbeat to its lease deadline: its TTL.
fn lease_span(node: &Value) -> time::Duration {
    at(&node["lease_deadline"]) - at(&node["last_heartbeat"])
}

fn ring(u: &str) {
    ok(u, &["ring", "create", "cache"]);
}

/// `registered: lease <id> until <time>, ring version <v>`: the lease id.
fn registered_lease(line: &str, version: u64) -> String {
    let rest = line
        .strip_prefix("registered: lease ")
        .unwrap_or_else(|| panic!("not a registration: {line}"));
    let (id, rest) = rest.split_once(" until ").expect("until");
    assert_eq!(id.len(), 32, "{line}");
    assert!(
        rest.ends_with(&format!("Z, ring version {version}")),
        "{line}"
    );
    id.to_owned()
}

#[test]
fn join_keeps_the_node_healthy_and_sigterm_leaves_at_once() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    ring(u);
    ok(u, &["node", "add", "cache", "b", "--weight", "2"]);
    let mut join = Join::start(
        u,
        &[
            "cache",
            "a",
            "--ttl",
            "1s",
            "--address",
            "10.0.0.1:11211",
            "--zone",
            "z1",
            "--label",
            "role=cache",
        ],
    );
    assert_eq!(
        join.line(),
        format!("node a joining ring cache with a 1s lease via {u}")
    );
    let lease = registered_lease(&join.line(), 3);
    let renewing = join.line();
    assert!(
        renewing.starts_with(&format!("renewing: lease {lease} until ")),
        "{renewing}"
    );
    let a = wait_health(u, "a", "healthy");
    assert_eq!(a["address"], "10.0.0.1:11211");
    // Healthy at every look for three TTLs of renewals.
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        let a = entry(u, "a").unwrap();
        assert_eq!(a["health"], "healthy", "{a}");
        assert_eq!(lease_span(&a), time::Duration::seconds(1), "{a}");
        std::thread::sleep(Duration::from_millis(200));
    }

    // The table: a leased node with its times, an operator's without.
    check(u, "node_list_health.txt", &["node", "list", "cache"]);

    join.signal("TERM");
    let status = join.wait();
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert_eq!(join.line(), format!("left: lease {lease} released"));
    // At once, with no wait for the TTL, the ring's `on_leave` (by default
    // `remove`) removed the node: one version, whose reason names the
    // released lease. No line beyond the four was printed.
    assert_eq!(entry(u, "a"), None);
    assert!(join.lines.recv_timeout(Duration::from_millis(200)).is_err());
    let ring: Value =
        serde_json::from_str(&ok(u, &["-o", "json", "ring", "show", "cache"])).unwrap();
    assert_eq!(ring["version"], 4, "{ring}");
    let history: Value = serde_json::from_str(&ok(u, &["-o", "json", "history", "cache"])).unwrap();
    let last = history["entries"]
        .as_array()
        .and_then(|e| e.last())
        .cloned()
        .unwrap();
    let reason = last["reason"].as_str().unwrap_or_default().to_owned();
    assert!(
        reason.starts_with(&format!("node `a` left (lease {lease} released at ")),
        "{last}"
    );
}

#[test]
fn sigint_leaves_too() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    ring(u);
    let mut join = Join::start(u, &["cache", "a", "--ttl", "2s"]);
    join.line();
    registered_lease(&join.line(), 2);
    join.signal("INT");
    assert_eq!(join.wait().code(), Some(0));
    // Removed at once by the default `on_leave: remove`.
    assert_eq!(entry(u, "a"), None);
}

#[test]
fn a_killed_join_turns_unhealthy_after_its_ttl() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    ring(u);
    let mut join = Join::start(u, &["cache", "a", "--ttl", "1s"]);
    join.line();
    registered_lease(&join.line(), 2);
    wait_health(u, "a", "healthy");
    join.signal("KILL");
    join.wait();
    let a = wait_health(u, "a", "unhealthy");
    // Its last renewal's deadline, one TTL after it, has passed.
    assert_eq!(lease_span(&a), time::Duration::seconds(1), "{a}");
    let deadline = at(&a["lease_deadline"]);
    assert!(time::OffsetDateTime::now_utc() > deadline, "{a}");
    // Health is not membership: the record is still there, no version.
    assert_eq!(a["state"], "active");
    let ring: Value =
        serde_json::from_str(&ok(u, &["-o", "json", "ring", "show", "cache"])).unwrap();
    assert_eq!(ring["version"], 2, "{ring}");
}

#[test]
fn refused_input_exits_2_with_the_message() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    ring(u);
    // Refused by the command itself, before any request.
    check_failure(
        u,
        "error_join_ttl.txt",
        2,
        &["node", "join", "cache", "a", "--ttl", "0s"],
    );
    check_failure(
        u,
        "error_join_weight.txt",
        2,
        &["node", "join", "cache", "a", "--weight", "0"],
    );
    check_failure(
        u,
        "error_join_address.txt",
        2,
        &["node", "join", "cache", "a", "--address", "10.0.0.1 11211"],
    );
    // Refused by ringd: its detail and problem type.
    let out = ringd(u, &["node", "join", "nope", "a"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    let (first, rest) = stderr.split_once('\n').unwrap();
    assert_eq!(
        first,
        format!("node a joining ring nope with a 10s lease via {u}")
    );
    golden("error_join_unknown_ring.txt", rest);
    // Nothing was registered.
    assert_eq!(entry(u, "a"), None);
}

/// Polls `ringd -o json history cache` until it reaches `version`; returns
/// the newest entry.
fn wait_version(u: &str, version: u64) -> Value {
    let until = Instant::now() + LIMIT;
    loop {
        let history: Value =
            serde_json::from_str(&ok(u, &["-o", "json", "history", "cache"])).unwrap();
        let newest = history["entries"]
            .as_array()
            .and_then(|e| e.last())
            .cloned()
            .unwrap_or(Value::Null);
        if newest["version"].as_u64() >= Some(version) {
            return newest;
        }
        assert!(Instant::now() < until, "no version {version}: {newest}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_killed_member_is_drained_after_drain_after_then_forgotten_after_forget_after() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    // One leased node: the guard's fraction must allow it to be the one
    // unhealthy node.
    ok(
        u,
        &[
            "ring",
            "create",
            "cache",
            "--drain-after",
            "2s",
            "--forget-after",
            "4s",
            "--max-unhealthy-fraction",
            "1",
        ],
    );
    ok(u, &["node", "add", "cache", "b"]);
    let mut join = Join::start(u, &["cache", "a", "--ttl", "1s"]);
    join.line();
    let lease = registered_lease(&join.line(), 3);
    wait_health(u, "a", "healthy");
    join.signal("KILL");
    join.wait();
    let a = wait_health(u, "a", "unhealthy");
    assert_eq!(a["state"], "active", "{a}");
    let expired = a["lease_deadline"].as_str().unwrap().to_owned();

    // drain_after: one version that drains it, naming the lease.
    let drained = wait_version(u, 4);
    assert_eq!(drained["version"], 4, "{drained}");
    assert_eq!(
        drained["reason"],
        format!("node `a` missed heartbeats for 2s (lease {lease} expired at {expired})"),
        "{drained}"
    );
    assert_eq!(drained["ops"][0]["op"], "upsert", "{drained}");
    assert_eq!(drained["ops"][0]["node"]["state"], "draining", "{drained}");
    assert_eq!(entry(u, "a").unwrap()["state"], "draining");

    // forget_after: one version that removes it.
    let removed = wait_version(u, 5);
    assert_eq!(removed["version"], 5, "{removed}");
    assert_eq!(
        removed["reason"],
        format!("node `a` missed heartbeats for 4s (lease {lease} expired at {expired})"),
        "{removed}"
    );
    assert_eq!(
        removed["ops"],
        serde_json::json!([{"op": "remove", "id": "a"}])
    );
    assert_eq!(entry(u, "a"), None);
    // Exactly one version per transition: nothing more follows.
    let api = TestApi::new(u, "cache");
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(decider_looked_again(&api, LIMIT));
    let ring: Value =
        serde_json::from_str(&ok(u, &["-o", "json", "ring", "show", "cache"])).unwrap();
    assert_eq!(ring["version"], 5, "{ring}");
    assert_eq!(entry(u, "b").unwrap()["state"], "active");
}
