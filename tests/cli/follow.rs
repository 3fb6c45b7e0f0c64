//! `ringd follow` against a real server: one line per applied version
//! (text and JSON), `--count` leaving the ack recorded, SIGTERM exiting 0,
//! the read token sufficing, and an unknown ring, a wrong token or a
//! malformed id refused with exit 2. (Over TLS: `tests/api/serve_tls.rs`.)

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::support::cli::{command, golden, ok, ringd};
use crate::support::ringd::Ringd;

/// Far above any wait these tests expect, so only a broken follow trips it.
const LIMIT: Duration = Duration::from_secs(20);

/// A ring `cache` at version 3: nodes a and b.
fn ring_at_3(u: &str) {
    ok(u, &["ring", "create", "cache", "--vnodes-per-weight", "4"]);
    ok(u, &["node", "add", "cache", "a"]);
    ok(u, &["node", "add", "cache", "b"]);
}

/// Waits for `child` to exit, within [`LIMIT`].
fn wait(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + LIMIT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("ringd follow did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `(version, lag)` of client `id` in `ringd -o json clients cache`.
fn listed(u: &str, id: &str) -> Option<(u64, u64)> {
    let list: serde_json::Value =
        serde_json::from_str(&ok(u, &["-o", "json", "clients", "cache"])).unwrap();
    list["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["client_id"] == id)
        .map(|c| (c["version"].as_u64().unwrap(), c["lag"].as_u64().unwrap()))
}

#[test]
fn prints_each_applied_version_and_leaves_the_last_acked() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    ring_at_3(u);
    for (args, name) in [
        (
            &["follow", "cache", "--client-id", "canary-1", "--count", "3"][..],
            "follow.txt",
        ),
        (
            &[
                "-o",
                "json",
                "follow",
                "cache",
                "--client-id",
                "canary-2",
                "--count",
                "3",
            ][..],
            "follow.json",
        ),
    ] {
        let mut child = command(u, args).spawn().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        // The first line is the current version: the client routes on it,
        // so the changes below reach it through its watch.
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        let n = if name == "follow.txt" { "c" } else { "d" };
        ok(u, &["node", "add", "cache", n]);
        ok(u, &["node", "drain", "cache", n]);
        let status = wait(&mut child);
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).unwrap();
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert!(status.success(), "{args:?}: {stderr}");
        assert_eq!(
            stderr,
            format!(
                "following ring cache as client {} via {u}\n",
                args[args.len() - 3]
            )
        );
        golden(name, &format!("{first}{rest}"));
    }
    // `--count` exits once the last ack is recorded: both are listed on
    // the version each printed last, without polling.
    assert_eq!(listed(u, "canary-1"), Some((5, 2)));
    assert_eq!(listed(u, "canary-2"), Some((7, 0)));
}

#[test]
fn sigterm_exits_zero() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    ring_at_3(u);
    let mut child = command(u, &["follow", "cache", "--client-id", "canary-1"])
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.starts_with("v3 "), "{first}");
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = wait(&mut child);
    assert_eq!(status.code(), Some(0));
}

#[test]
fn an_unknown_ring_or_a_malformed_id_exits_2() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    let out = ringd(u, &["follow", "nope", "--client-id", "canary-1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr).replace(u, "<url>");
    golden("error_follow_unknown_ring.txt", &stderr);
    let out = ringd(u, &["follow", "cache", "--client-id", "no spaces"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: invalid value 'no spaces' for '--client-id <ID>': client id `no spaces` is invalid"),
        "{stderr}"
    );
}

#[test]
fn the_read_token_is_enough_and_a_wrong_one_exits_2() {
    let s = Ringd::sqlite()
        .args(&["--admin-token", "adm-s3cret", "--read-token", "read-s3cret"])
        .start();
    let u = s.url.as_str();
    ok(u, &["--token", "adm-s3cret", "ring", "create", "cache"]);
    let out = ringd(
        u,
        &[
            "--token",
            "read-s3cret",
            "follow",
            "cache",
            "--client-id",
            "canary-1",
            "--count",
            "1",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8(out.stdout).unwrap();
    assert!(
        line.starts_with("v1 ") && line.ends_with(" 0 nodes (0 active)\n"),
        "{line}"
    );
    let list = ok(
        u,
        &["--token", "read-s3cret", "-o", "json", "clients", "cache"],
    );
    let list: serde_json::Value = serde_json::from_str(&list).unwrap();
    assert_eq!(list["clients"][0]["client_id"], "canary-1");
    assert_eq!(list["clients"][0]["version"], 1);

    let out = ringd(
        u,
        &[
            "--token",
            "wrong",
            "follow",
            "cache",
            "--client-id",
            "canary-2",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("urn:ringd:problem:unauthorized (HTTP 401)"),
        "{stderr}"
    );
}
