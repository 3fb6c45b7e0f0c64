//! How the CLI fails: the server's problem on stderr with its type and
//! field, and the documented exit codes (1 refused, 2 usage, 3 no server).

use crate::support::cli::{check_failure, ok, ringd};
use crate::support::ringd::Ringd;

/// Port 1 on loopback: nothing listens there, so connections are refused.
const NO_SERVER: &str = "http://127.0.0.1:1";

#[test]
fn refusals_exit_1_with_the_problem() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    check_failure(u, "error_unknown_ring.txt", 1, &["ring", "show", "nope"]);
    // JSON output changes stdout only; errors stay text on stderr.
    check_failure(
        u,
        "error_unknown_ring.txt",
        1,
        &["-o", "json", "lookup", "nope", "k"],
    );
    ok(u, &["ring", "create", "cache"]);
    ok(u, &["node", "add", "cache", "a"]);
    check_failure(
        u,
        "error_invalid_weight.txt",
        1,
        &["node", "add", "cache", "x", "--weight", "0"],
    );
    check_failure(
        u,
        "error_node_exists.txt",
        1,
        &["node", "add", "cache", "a", "--weight", "5"],
    );
    check_failure(
        u,
        "error_unknown_node.txt",
        1,
        &["node", "drain", "cache", "zz"],
    );
    check_failure(
        u,
        "error_replicas.txt",
        1,
        &["lookup", "cache", "k", "--replicas", "0"],
    );
    check_failure(
        u,
        "error_unknown_version.txt",
        1,
        &["diff", "cache", "1", "9"],
    );
    let bad = s.dir.join("bad.json");
    std::fs::write(&bad, "{\"ops\": [").unwrap();
    let out = ringd(u, &["change", "apply", "cache", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: ") && stderr.contains("is not valid JSON"),
        "{stderr}"
    );
    std::fs::write(&bad, "[1]").unwrap();
    let out = ringd(u, &["change", "apply", "cache", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("must hold a JSON object"), "{stderr}");
    let empty = s.dir.join("empty.json");
    std::fs::write(&empty, "{\"ops\": []}").unwrap();
    check_failure(
        u,
        "error_empty_change.txt",
        1,
        &["change", "apply", "cache", empty.to_str().unwrap()],
    );
    // Nothing above changed the ring.
    assert!(ok(u, &["-o", "json", "ring", "show", "cache"]).contains("\n  \"version\": 2\n"));
}

#[test]
fn usage_errors_exit_2() {
    check_failure(
        NO_SERVER,
        "error_usage_missing_id.txt",
        2,
        &["node", "add", "cache"],
    );
    check_failure(
        NO_SERVER,
        "error_usage_label.txt",
        2,
        &["node", "add", "cache", "a", "--label", "novalue"],
    );
    check_failure(
        NO_SERVER,
        "error_usage_addr.txt",
        2,
        &["--addr", "127.0.0.1:7420", "ring", "list"],
    );
}

#[test]
fn no_server_exits_3() {
    check_failure(NO_SERVER, "error_unreachable.txt", 3, &["ring", "list"]);
    let out = ringd(
        NO_SERVER,
        &[
            "--addr",
            "http://127.0.0.1:1,http://127.0.0.1:2",
            "ring",
            "list",
        ],
    );
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(
            "error: no ringd server reachable at http://127.0.0.1:1,http://127.0.0.1:2\n"
        ),
        "{stderr}"
    );
}

#[test]
fn the_token_comes_from_the_flag_or_ringd_token() {
    let s = Ringd::sqlite().args(&["--admin-token", "s3cret"]).start();
    let u = s.url.as_str();
    let out = ringd(u, &["ring", "create", "cache"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("urn:ringd:problem:unauthorized (HTTP 401)"),
        "{stderr}"
    );
    ok(u, &["--token", "s3cret", "ring", "create", "cache"]);
    let out = crate::support::cli::command(u, &["node", "add", "cache", "a"])
        .env("RINGD_TOKEN", "s3cret")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The token never appears in help output.
    let out = crate::support::cli::command(u, &["ring", "list", "--help"])
        .env("RINGD_TOKEN", "s3cret")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("s3cret"));
}
