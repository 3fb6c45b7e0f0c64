//! `ringd sync` against a real server, with shell commands standing in
//! for the proxy (the real nginx, HAProxy and nutcracker run in
//! `tests/proxies/`): each version written whole as `GET …/export` renders
//! it, checked, reloaded and only then acked as a proxy; a failing check
//! or reload puts the old file back and shows the failure until a version
//! applies; a restarted agent adopts its file; SIGTERM exits 0; refused
//! arguments exit 2 and write nothing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::support::cli::{ok, ringd};
use crate::support::ringd::Ringd;
use crate::support::sync_agent::{client_when, SyncAgent};

/// `ringd sync cache` as nginx client `id`, with shell commands for the
/// proxy: the check fails while `fail-check` exists, saying so on stderr
/// as nginx would, and the reload fails while `fail-reload` exists and
/// otherwise logs each version it loads.
fn start_agent(u: &str, dir: &Path, id: &str) -> SyncAgent {
    let out = dir.join("upstream.conf");
    let log = dir.join("reloads");
    let check = format!(
        "test -s \"$RINGD_FILE\" || exit 9; if [ -e {d}/fail-check ]; then echo \"nginx: [emerg] unknown directive \\\"x\\\" in $RINGD_FILE:2\" >&2; exit 1; fi",
        d = dir.display()
    );
    let reload = format!(
        "if [ -e {d}/fail-reload ]; then echo 'nginx: [error] invalid PID number \"\"' >&2; exit 1; fi; echo \"$RINGD_VERSION\" >> {log}",
        d = dir.display(),
        log = log.display()
    );
    SyncAgent::start(
        u,
        &[
            "cache",
            "--format",
            "nginx",
            "--out",
            out.to_str().unwrap(),
            "--check",
            &check,
            "--reload",
            &reload,
            "--client-id",
            id,
        ],
    )
}

/// An nginx ring `cache` at version 3: servers a and b.
fn nginx_ring(u: &str) {
    ok(u, &["ring", "create", "cache", "--algorithm", "nginx"]);
    ok(
        u,
        &["node", "add", "cache", "a", "--address", "10.0.0.1:80"],
    );
    ok(
        u,
        &["node", "add", "cache", "b", "--address", "10.0.0.2:80"],
    );
}

fn export(u: &str, version: u64) -> String {
    ok(
        u,
        &[
            "export",
            "cache",
            "--format",
            "nginx",
            "--version",
            &version.to_string(),
        ],
    )
}

fn fingerprint(u: &str, version: u64) -> String {
    let v: Value = serde_json::from_str(&ok(u, &["-o", "json", "history", "cache"])).unwrap();
    v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["version"] == version)
        .map(|e| e["fingerprint"].as_str().unwrap().to_owned())
        .expect("the version in the history")
}

/// The one client of `cache` once it satisfies `done`.
fn client_once(u: &str, done: impl Fn(&Value) -> bool) -> Value {
    client_when(u, "cache", "nginx-1", done)
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn each_version_is_written_checked_reloaded_then_acked_as_a_proxy() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    nginx_ring(u);
    let dir = tempfile::tempdir().unwrap();
    let mut agent = start_agent(u, dir.path(), "nginx-1");
    let first = agent.next();
    assert_eq!(first["event"], "applied");
    assert_eq!(first["version"], 3);
    assert_eq!(first["fingerprint"], fingerprint(u, 3).as_str());
    assert_eq!(first["active_nodes"], 2);
    assert_eq!(first["client_id"], "nginx-1");
    // The bytes `GET …/export` gives for the version, whole.
    assert_eq!(read(dir.path().join("upstream.conf")), export(u, 3));
    let c = client_once(u, |c| c["version"] == 3);
    assert_eq!(c["kind"], "proxy");
    assert_eq!(c["failure"], Value::Null);
    assert_eq!(c["matches"], true);

    ok(
        u,
        &["node", "add", "cache", "c", "--address", "10.0.0.3:80"],
    );
    ok(u, &["node", "drain", "cache", "a"]);
    agent.until("applied", 5);
    assert_eq!(read(dir.path().join("upstream.conf")), export(u, 5));
    client_once(u, |c| c["version"] == 5 && c["on_latest"] == true);
    // Every version reloaded once, in order (4 may be skipped when 5
    // arrives first; never reloaded twice).
    let reloads = read(dir.path().join("reloads"));
    assert!(reloads == "3\n4\n5\n" || reloads == "3\n5\n", "{reloads}");
    // Nothing but the file in the directory: no temporary file left.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["reloads", "upstream.conf"]);

    assert_eq!(agent.signal("-TERM").code(), Some(0));
}

#[test]
fn a_failing_check_or_reload_keeps_the_old_file_and_shows_the_failure() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    nginx_ring(u);
    let dir = tempfile::tempdir().unwrap();
    let agent = start_agent(u, dir.path(), "nginx-1");
    agent.until("applied", 3);
    let v3 = export(u, 3);

    std::fs::write(dir.path().join("fail-check"), "").unwrap();
    ok(
        u,
        &["node", "add", "cache", "c", "--address", "10.0.0.3:80"],
    );
    let failed = agent.until("failed", 4);
    let error = format!(
        "check command exited with status 1: nginx: [emerg] unknown directive \"x\" in {}:2",
        dir.path().join("upstream.conf").display()
    );
    assert_eq!(failed["error"], error.as_str());
    assert_eq!(failed["kept"], 3);
    assert_eq!(read(dir.path().join("upstream.conf")), v3);
    let c = client_once(u, |c| c["failure"] != Value::Null);
    assert_eq!(c["version"], 3);
    assert_eq!(c["lag"], 1);
    assert_eq!(c["failure"]["version"], 4);
    assert_eq!(c["failure"]["error"], error.as_str());
    let text = ok(u, &["clients", "cache"]);
    assert!(
        text.contains("1 failing\n\nnginx-1 could not apply version 4; it stays on version 3:\n    check command exited with status 1: nginx: [emerg] unknown directive \"x\""),
        "{text}"
    );

    // The check passes but the reload fails: the old file goes back too.
    std::fs::remove_file(dir.path().join("fail-check")).unwrap();
    std::fs::write(dir.path().join("fail-reload"), "").unwrap();
    let failed = agent.until("failed", 4);
    assert_eq!(
        failed["error"],
        "reload command exited with status 1: nginx: [error] invalid PID number \"\""
    );
    assert_eq!(read(dir.path().join("upstream.conf")), v3);
    assert_eq!(read(dir.path().join("reloads")), "3\n");

    // Fixed: the retry applies version 4 and the failure is cleared.
    std::fs::remove_file(dir.path().join("fail-reload")).unwrap();
    agent.until("applied", 4);
    assert_eq!(read(dir.path().join("upstream.conf")), export(u, 4));
    let c = client_once(u, |c| c["version"] == 4);
    assert_eq!(c["failure"], Value::Null);
    assert_eq!(read(dir.path().join("reloads")), "3\n4\n");
}

#[test]
fn a_killed_agent_leaves_a_whole_file_and_its_successor_adopts_it() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    nginx_ring(u);
    let dir = tempfile::tempdir().unwrap();
    let mut agent = start_agent(u, dir.path(), "nginx-1");
    agent.until("applied", 3);
    assert_eq!(agent.signal("-KILL").code(), None);
    assert_eq!(read(dir.path().join("upstream.conf")), export(u, 3));

    // The successor finds version 3 in the file: it checks and reloads
    // it as it is (the agent may have died before the reload) and acks
    // it, then follows the ring as before.
    let agent = start_agent(u, dir.path(), "nginx-1");
    ok(
        u,
        &["node", "add", "cache", "c", "--address", "10.0.0.3:80"],
    );
    let line = agent.next();
    assert_eq!(
        (&line["event"], &line["version"]),
        (&Value::from("applied"), &Value::from(4))
    );
    assert_eq!(read(dir.path().join("reloads")), "3\n3\n4\n");
    client_once(u, |c| c["version"] == 4);
    drop(agent);

    // Killed at arbitrary moments while versions arrive: the file is
    // always one version's export, whole, whatever the moment.
    for i in 0..20u64 {
        let mut agent = start_agent(u, dir.path(), "nginx-1");
        ok(
            u,
            &[
                "node",
                "add",
                "cache",
                &format!("n{i}"),
                "--address",
                &format!("10.0.1.{i}:80"),
            ],
        );
        std::thread::sleep(Duration::from_millis(i * 7 % 60));
        agent.signal("-KILL");
        let text = read(dir.path().join("upstream.conf"));
        let version: u64 = text
            .split(' ')
            .nth(5)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("a torn file: {text}"));
        assert_eq!(text, export(u, version), "kill {i}");
    }
}

#[test]
fn refused_arguments_exit_2_and_write_nothing() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    nginx_ring(u);
    ok(u, &["ring", "create", "plain"]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("upstream.conf");
    let out = out.to_str().unwrap();
    let missing = dir.path().join("missing/upstream.conf");
    let base = ["sync", "--client-id", "nginx-1", "--reload", "true"];
    let cases: [(&[&str], &str); 6] = [
        (
            &[
                "cache",
                "--format",
                "nginx",
                "--out",
                missing.to_str().unwrap(),
            ],
            "does not exist",
        ),
        (
            &["plain", "--format", "nginx", "--out", out],
            "ring `plain` places keys with `ring`, which nginx does not compute",
        ),
        (
            &["cache", "--format", "nginx", "--out", out, "--pool", "p"],
            "`pool` applies to twemproxy exports only, not to nginx",
        ),
        (
            &[
                "cache",
                "--format",
                "nginx",
                "--out",
                out,
                "--upstream",
                "a b;",
            ],
            "`upstream` must be 1 to 64 characters",
        ),
        (
            &["nope", "--format", "nginx", "--out", out],
            "ring-not-found",
        ),
        (
            &[
                "cache",
                "--format",
                "nginx",
                "--out",
                out,
                "--command-timeout",
                "0s",
            ],
            "--command-timeout must be more than zero",
        ),
    ];
    for (args, says) in cases {
        let all: Vec<&str> = base.iter().chain(args).copied().collect();
        let run = ringd(u, &all);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{all:?}: {stderr}");
        assert!(stderr.contains(says), "{all:?}: {stderr}");
    }
    let empty = ringd(
        u,
        &[
            "sync",
            "cache",
            "--format",
            "nginx",
            "--out",
            out,
            "--client-id",
            "n",
            "--reload",
            " ",
        ],
    );
    assert_eq!(empty.status.code(), Some(2));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // Nothing acked either.
    let list: Value = serde_json::from_str(&ok(u, &["-o", "json", "clients", "cache"])).unwrap();
    assert_eq!(list["clients"], Value::Array(vec![]));
}
