//! What every synced proxy must also get right, besides following the
//! ring: bad nodes refused before they reach its file, a version the proxy
//! refuses, an agent killed at any moment, and a rollout whose steps wait
//! for the proxy's reload.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};

use super::sync_driver::{node, remove, Proxy, Synced, CLIENT, RING};
use crate::support::sync_agent::{client_entry, client_when, LIMIT};

/// Each `(field, value)` written into a node is refused with 400 naming
/// the field; the ring, the file, the agent's ack and the proxy's
/// placement stay as they were.
pub(super) fn bad_nodes_change_nothing<P: Proxy>(s: &mut Synced<P>, cases: &[(&str, Value)]) {
    let version = s.version();
    let text = s.file_text();
    for (field, value) in cases {
        let mut body = json!({"address": "127.0.0.1:9", "weight": 1});
        body[*field] = value.clone();
        let (status, problem) = s.call(Method::PUT, "/nodes/bad", body);
        assert_eq!(status, 400, "{field} {value:?}: {problem}");
        assert_eq!(problem["field"], *field, "{problem}");
    }
    assert_eq!(s.version(), version);
    assert_eq!(s.file_text(), text);
    let c = client_entry(s.url(), RING, CLIENT).expect("the proxy's entry");
    assert_eq!(
        (&c["version"], &c["failure"]),
        (&json!(version), &Value::Null)
    );
    s.check(version);
}

/// A node at `cache-x.invalid:80`, which ringd accepts but the proxy's
/// check refuses (`says` is the proxy's words): the old file stays, the
/// proxy keeps serving the old version, nothing is acked, and `ringd
/// clients` shows the failure until the node goes and a version applies.
pub(super) fn failing_check<P: Proxy>(s: &mut Synced<P>, addresses: &[String], says: &str) {
    let before = s.version();
    let text = s.file_text();
    let refused = s.change(vec![node("bad", "cache-x.invalid:80", 1)]);
    let line = s.agent().until("failed", refused);
    let error = line["error"].as_str().expect("an error");
    assert!(
        error.starts_with("check command exited with status 1: ") && error.contains(says),
        "{error}"
    );
    assert_eq!(line["kept"], before);
    assert_eq!(s.file_text(), text);
    let c = client_when(s.url(), RING, CLIENT, |c| !c["failure"].is_null());
    assert_eq!(c["version"], before);
    assert_eq!(c["failure"]["version"], refused);
    assert_eq!(c["failure"]["error"], error);
    let listing = crate::support::cli::ok(s.url(), &["clients", RING]);
    assert!(
        listing.contains(&format!(
            "{CLIENT} could not apply version {refused}; it stays on version {before}:"
        )),
        "{listing}"
    );
    s.check(before);

    // Without the node the next version applies and clears the failure.
    let fixed = s.step(vec![remove("bad"), node("n01", &addresses[1], 2)]);
    let c = client_entry(s.url(), RING, CLIENT).expect("the proxy's entry");
    assert_eq!(
        (&c["version"], &c["failure"]),
        (&json!(fixed), &Value::Null)
    );
}

/// The version a file names in its first line.
fn named_version(text: &str) -> u64 {
    let first = text.lines().next().unwrap_or_default();
    first
        .split_once(" version ")
        .and_then(|(_, rest)| rest.split(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("a torn file: {text:?}"))
}

/// Ten agents SIGKILLed at moments spread over a version's write, check
/// and reload: the file is always one version's export, whole, which the
/// proxy accepts. The last restart brings the proxy to the latest
/// version, checked key by key.
pub(super) fn killed_agents<P: Proxy>(s: &mut Synced<P>, addresses: &[String]) {
    for i in 0..10u64 {
        // Each differs from the one before, and the first from 3.
        let weight = [1, 2, 4, 5, 3][i as usize % 5];
        s.change(vec![node("n00", &addresses[0], weight)]);
        std::thread::sleep(Duration::from_millis(i * 23 % 120));
        s.agent.as_mut().expect("an agent").signal("-KILL");
        let text = s.file_text();
        let version = named_version(&text);
        assert_eq!(text, s.export(version), "kill {i}");
        assert!(
            s.proxy_accepts_file(),
            "kill {i}: the proxy refuses the file"
        );
        s.start_agent();
    }
    let latest = s.version();
    s.acked(latest);
    s.check(latest);
}

/// A file that holds the agent's reloads while it exists, for `proxy`'s
/// test, and the command to put before the reload that waits for it.
pub(super) fn reload_hold(proxy: &str) -> (PathBuf, String) {
    let hold = std::env::temp_dir().join(format!("ringd-hold-{proxy}-{}", std::process::id()));
    let prefix = format!("while [ -e {} ]; do sleep 0.05; done; ", hold.display());
    (hold, prefix)
}

/// A rollout of two steps with the gate at 1, while the agent's reloads
/// wait for `hold` to go: the first step is committed and written, but
/// the rollout waits and the proxy keeps the old placement; once reloads
/// go ahead, each step is reloaded and acked before the next.
pub(super) fn gated_rollout<P: Proxy>(s: &mut Synced<P>, addresses: &[String], hold: &Path) {
    let before = s.version();
    std::fs::write(hold, "").expect("the hold file");
    let body = json!({
        "ops": [node("n00", &addresses[0], 7)],
        "policy": {"steps": 2, "gate": 1, "gate_timeout": "5m"},
    });
    let (status, rollout) = s.call(Method::POST, "/rollouts", body);
    assert_eq!(status, 201, "{rollout}");
    let path = format!("/rollouts/{}", rollout["id"]);
    let waiting = rollout_when(s, &path, |r| {
        r["state"] == "waiting_for_gate" && r["step"] == 1
    });
    let first = waiting["plan"][0]["version"]
        .as_u64()
        .expect("step 1's version");
    assert_eq!(first, before + 1);
    // The agent has the step in the file but cannot reload: nothing is
    // acked, the gate holds and the proxy serves the version before.
    std::thread::sleep(Duration::from_millis(1500));
    let (_, still) = s.call(Method::GET, &path, Value::Null);
    assert_eq!(
        (&still["state"], &still["step"]),
        (&json!("waiting_for_gate"), &json!(1))
    );
    assert_eq!(still["gate"]["lagging"], json!([CLIENT]), "{still}");
    assert_eq!(s.version(), first);
    let c = client_entry(s.url(), RING, CLIENT).expect("the proxy's entry");
    assert_eq!(c["version"], before);
    s.check(before);

    std::fs::remove_file(hold).expect("the hold goes");
    s.agent().until("applied", first);
    let done = rollout_when(s, &path, |r| r["state"] == "done");
    let last = done["plan"][1]["version"]
        .as_u64()
        .expect("step 2's version");
    assert_eq!(last, first + 1);
    s.agent().until("applied", last);
    s.acked(last);
    s.check(last);
}

/// Reads the rollout at `path` until `done` holds.
fn rollout_when<P: Proxy>(s: &Synced<P>, path: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + LIMIT;
    loop {
        let (status, r) = s.call(Method::GET, path, Value::Null);
        assert_eq!(status, 200, "{r}");
        if done(&r) {
            return r;
        }
        assert!(
            Instant::now() < deadline,
            "the rollout never got there: {r}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
