//! The operator CLI end to end: the real `ringd` binary as a client of a
//! real server, each command's table and `--output json` forms compared
//! with the golden files in `tests/cli/expected/` (timestamps aside).
//! Watch and clients are in `watch.rs`, failures in `errors.rs`.

use crate::support::cli::{check, check_failure, ok};
use crate::support::ringd::Ringd;

/// Rings with few virtual nodes keep the moved-range lists short enough
/// to read in the golden files.
const SMALL_RING: &[&str] = &["ring", "create", "cache", "--vnodes-per-weight", "4"];

#[test]
fn rings_nodes_changes_and_inspection() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();

    // Rings.
    check(u, "ring_create.txt", SMALL_RING);
    check(u, "ring_create_again.txt", SMALL_RING);
    check(
        u,
        "ring_create.json",
        &[
            "-o",
            "json",
            "ring",
            "create",
            "sessions",
            "--algorithm",
            "rendezvous",
            "--replication-factor",
            "2",
        ],
    );

    // Nodes: every mutation prints its new version and moved share.
    check(
        u,
        "node_add.txt",
        &[
            "node",
            "add",
            "cache",
            "a",
            "--zone",
            "z1",
            "--address",
            "10.0.0.1:11211",
            "--label",
            "role=primary",
        ],
    );
    check(
        u,
        "node_add.json",
        &[
            "node", "add", "cache", "b", "--weight", "2", "--zone", "z2", "--output", "json",
        ],
    );
    ok(u, &["node", "add", "cache", "c", "--label", "tier=warm"]);
    check(
        u,
        "node_update.txt",
        &[
            "node",
            "update",
            "cache",
            "c",
            "--weight",
            "3",
            "--label",
            "tier=hot",
            "--label",
            "rack=r7",
            "--reason",
            "bigger box",
        ],
    );
    // Only the given fields change: weight 3 and label rack stay.
    check(
        u,
        "node_update.json",
        &[
            "-o",
            "json",
            "node",
            "update",
            "cache",
            "c",
            "--address",
            "10.0.0.3:11211",
            "--remove-label",
            "tier",
        ],
    );
    check(u, "node_list_after_update.txt", &["node", "list", "cache"]);
    check(
        u,
        "node_update_unchanged.txt",
        &["node", "update", "cache", "c", "--weight", "3"],
    );
    check(u, "node_drain.txt", &["node", "drain", "cache", "c"]);
    check(
        u,
        "node_drain.json",
        &["-o", "json", "node", "drain", "cache", "b"],
    );
    ok(u, &["node", "update", "cache", "b", "--state", "active"]);
    check(
        u,
        "node_remove.txt",
        &["node", "remove", "cache", "c", "--reason", "decommissioned"],
    );
    ok(u, &["node", "add", "cache", "d"]);
    check(
        u,
        "node_remove.json",
        &["-o", "json", "node", "remove", "cache", "d"],
    );
    // The ring is now at version 12: a (z1) and b (weight 2, z2), active.
    check(u, "node_list.txt", &["node", "list", "cache"]);
    check(
        u,
        "node_list.json",
        &["-o", "json", "node", "list", "cache"],
    );
    check(u, "ring_list.txt", &["ring", "list"]);
    check(u, "ring_list.json", &["-o", "json", "ring", "list"]);
    check(u, "ring_show.txt", &["ring", "show", "cache"]);
    check(
        u,
        "ring_show.json",
        &["-o", "json", "ring", "show", "cache"],
    );

    // A multi-op change: preview, then commit on the previewed version.
    let file = s.dir.join("change.json");
    std::fs::write(
        &file,
        r#"{"ops": [{"op": "upsert", "node": {"id": "e", "weight": 2, "zone": "z1"}},
                   {"op": "remove", "id": "a"}],
            "reason": "replace a with e"}"#,
    )
    .unwrap();
    let file = file.to_str().unwrap();
    check(
        u,
        "change_dry_run.txt",
        &["change", "apply", "cache", file, "--dry-run"],
    );
    check(
        u,
        "change_dry_run.json",
        &["-o", "json", "change", "apply", "cache", file, "--dry-run"],
    );
    // The dry runs committed nothing.
    assert!(ok(u, &["-o", "json", "ring", "show", "cache"]).contains("\n  \"version\": 12\n"));
    let key = ["--idempotency-key", "cli-test-1"];
    check(
        u,
        "change_apply.txt",
        &[&["change", "apply", "cache", file][..], &key].concat(),
    );
    // The same key again is answered with the first commit, not applied twice.
    check(
        u,
        "change_apply_replayed.txt",
        &[&["change", "apply", "cache", file][..], &key].concat(),
    );
    let file2 = s.dir.join("change2.json");
    std::fs::write(
        &file2,
        r#"{"ops": [{"op": "upsert", "node": {"id": "f", "zone": "z2"}}]}"#,
    )
    .unwrap();
    let file2 = file2.to_str().unwrap();
    check(
        u,
        "change_apply.json",
        &[
            "-o",
            "json",
            "change",
            "apply",
            "cache",
            file2,
            "--idempotency-key",
            "cli-test-2",
        ],
    );
    // Version 14: b (2, z2), e (2, z1), f (1, z2).

    // Inspection.
    check(u, "lookup.txt", &["lookup", "cache", "user:1234"]);
    check(
        u,
        "lookup.json",
        &[
            "-o",
            "json",
            "lookup",
            "cache",
            "user:1234",
            "--replicas",
            "2",
            "--version",
            "13",
        ],
    );
    check(u, "ownership.txt", &["ownership", "cache"]);
    check(
        u,
        "ownership.json",
        &["-o", "json", "ownership", "cache", "--version", "12"],
    );
    check(u, "diff.txt", &["diff", "cache", "12", "13"]);
    check(u, "diff.json", &["-o", "json", "diff", "cache", "13", "14"]);
    check(u, "history.txt", &["history", "cache"]);
    check(
        u,
        "history_limit.txt",
        &["history", "cache", "--limit", "2"],
    );
    check(
        u,
        "history.json",
        &["-o", "json", "history", "cache", "--limit", "3"],
    );

    // Deleting.
    check(u, "ring_delete.txt", &["ring", "delete", "sessions"]);
    ok(u, &["ring", "create", "tmp"]);
    check(
        u,
        "ring_delete.json",
        &["-o", "json", "ring", "delete", "tmp"],
    );
    check(u, "ring_list_after_delete.txt", &["ring", "list"]);
}

#[test]
fn change_apply_reads_stdin_and_refuses_nothing_silently() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    ok(u, SMALL_RING);
    let mut child = crate::support::cli::command(u, &["change", "apply", "cache", "-"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(br#"{"ops": [{"op": "upsert", "node": {"id": "a"}}]}"#)
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    crate::support::cli::golden(
        "change_apply_stdin.txt",
        &String::from_utf8_lossy(&out.stdout),
    );
    // A generated idempotency key is recorded with the version.
    let history = ok(u, &["-o", "json", "history", "cache"]);
    assert!(
        history.contains("\"idempotency_key\": \"ringd-cli-"),
        "{history}"
    );
    // Applying a change that alters nothing commits nothing.
    let file = s.dir.join("same.json");
    std::fs::write(&file, r#"{"ops": [{"op": "upsert", "node": {"id": "a"}}]}"#).unwrap();
    check(
        u,
        "change_apply_noop.txt",
        &["change", "apply", "cache", file.to_str().unwrap()],
    );
    assert!(ok(u, &["-o", "json", "ring", "show", "cache"]).contains("\n  \"version\": 2\n"));
}

#[test]
fn haproxy_rings_show_their_avalanche_and_its_changes() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    let create = [
        "ring",
        "create",
        "edge",
        "--algorithm",
        "haproxy",
        "--avalanche",
        "false",
    ];
    check(u, "ring_create_haproxy.txt", &create);
    ok(u, &["node", "add", "edge", "a"]);
    let patch = s.dir.join("avalanche.json");
    std::fs::write(
        &patch,
        r#"{"ops": [{"op": "update_config", "config": {"avalanche": true, "hash": "djb2"}}]}"#,
    )
    .unwrap();
    let path = patch.to_str().unwrap();
    check(
        u,
        "change_avalanche_dry_run.txt",
        &["change", "apply", "edge", path, "--dry-run"],
    );
}

#[test]
fn twemproxy_rings_show_their_hash_tag() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    let create = [
        "ring",
        "create",
        "pool",
        "--algorithm",
        "twemproxy",
        "--hash-tag",
        "{}",
    ];
    check(u, "ring_create_twemproxy.txt", &create);
    ok(
        u,
        &["node", "add", "pool", "a", "--address", "10.0.0.1:11211"],
    );
    let patch = s.dir.join("hash_tag.json");
    std::fs::write(
        &patch,
        r#"{"ops": [{"op": "update_config", "config": {"hash_tag": null, "hash": "murmur"}}]}"#,
    )
    .unwrap();
    let path = patch.to_str().unwrap();
    check(
        u,
        "change_hash_tag_dry_run.txt",
        &["change", "apply", "pool", path, "--dry-run"],
    );
    check(
        u,
        "export_twemproxy.txt",
        &["export", "pool", "--format", "twemproxy", "--redis"],
    );
    check_failure(
        u,
        "error_export_format.txt",
        1,
        &["export", "pool", "--format", "nginx"],
    );
}
