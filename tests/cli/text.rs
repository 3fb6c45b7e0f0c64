//! What the CLI prints of stored text: control characters that reached
//! the store around the API are shown escaped, never acted on; tables
//! align by display width (CJK and emoji take two columns); keys given as
//! bytes; config changes in the preview.

use crate::support::cli::{check, check_failure, ok};
use crate::support::ringd::Ringd;
use ringd::ring::is_refused_char;
use unicode_width::UnicodeWidthStr;

/// Asserts that `out` holds no character a terminal would act on.
fn assert_inert(out: &str) {
    let found: Vec<char> = out
        .chars()
        .filter(|&c| c != '\n' && is_refused_char(c))
        .collect();
    assert!(found.is_empty(), "raw {found:?} in {out}");
}

/// Writes `reason` into version `version`'s stored change and `address`
/// into its first node, directly in the SQLite file.
fn tamper(db: &std::path::Path, version: i64, reason: &str, address: &str) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let changed = conn
        .execute(
            "UPDATE snapshots SET
               snapshot = json_set(snapshot, '$.change.reason', ?1, '$.nodes[0].address', ?2),
               change = json_set(change, '$.reason', ?1)
             WHERE ring = 'cache' AND version = ?3",
            rusqlite::params![reason, address, version],
        )
        .unwrap();
    assert_eq!(changed, 1);
}

#[test]
fn stored_control_characters_are_printed_escaped() {
    let mut first = Ringd::sqlite().start();
    let u = first.url.clone();
    ok(&u, &["ring", "create", "cache", "--vnodes-per-weight", "4"]);
    ok(
        &u,
        &["node", "add", "cache", "a", "--address", "10.0.0.1:1"],
    );
    ok(&u, &["node", "add", "cache", "b", "--reason", "plain"]);
    first.kill();
    // Sets the title, clears the screen, forges a line with CR and LF, a
    // C1 CSI, and reverses the rest of the line with a bidi override.
    let reason = "\u{1b}]0;pwned\u{7}\u{1b}[2J\rversion 99 at 2030-01-01T00:00:00Z: moved 0.00%\nok \u{9b}31m \u{202e}txet";
    tamper(&first.dir.join("ringd.db"), 3, reason, "10.0.0.1:1\u{202e}");
    let s = Ringd::sqlite_in(&first.dir).start();
    let u = s.url.as_str();

    let history = check(u, "text_history.txt", &["history", "cache"]);
    let watch = check(
        u,
        "text_watch.txt",
        &["watch", "cache", "--after", "2", "--count", "1"],
    );
    let nodes = check(u, "text_node_list.txt", &["node", "list", "cache"]);
    let show = ok(u, &["ring", "show", "cache"]);
    // Scripts get the same text back from JSON, escaped the JSON way.
    let json = check(
        u,
        "text_history.json",
        &["-o", "json", "history", "cache", "--limit", "1"],
    );
    for out in [&history, &watch, &nodes, &show, &json] {
        assert_inert(out);
    }
    // One version, one line, however many line breaks the reason holds.
    assert_eq!(watch.lines().count(), 1, "{watch}");
    assert_eq!(history.lines().count(), 4, "{history}");
    let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(parsed["entries"][0]["reason"], reason);
}

#[test]
fn tables_align_by_display_width() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    ok(u, &["ring", "create", "cache"]);
    ok(
        u,
        &[
            "node",
            "add",
            "cache",
            "a",
            "--address",
            "东京-1:11211",
            "--label",
            "team=数据库",
        ],
    );
    ok(
        u,
        &[
            "node",
            "add",
            "cache",
            "b",
            "--address",
            "🚀rocket:1",
            "--hash-key",
            "ключ",
        ],
    );
    ok(
        u,
        &[
            "node",
            "add",
            "cache",
            "c",
            "--address",
            "plain:1",
            "--label",
            "owner=ｆｕｌｌ",
        ],
    );
    let out = check(u, "text_node_list_wide.txt", &["node", "list", "cache"]);
    // Every row's LABELS cell starts at the header's display column.
    let lines: Vec<&str> = out.lines().skip(2).collect();
    let column = |line: &str, at: usize| line[..at].width();
    let header = lines[0];
    let want = column(header, header.find("LABELS").unwrap());
    for line in &lines[1..] {
        let at = line.rfind("  ").unwrap() + 2;
        assert_eq!(column(line, at), want, "{out}");
    }
}

#[test]
fn lookups_take_bytes_and_previews_show_config_changes() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    ok(u, &["ring", "create", "cache", "--vnodes-per-weight", "4"]);
    for n in ["a", "b", "c"] {
        ok(u, &["node", "add", "cache", n]);
    }
    let hex = check(u, "lookup_hex.txt", &["lookup", "cache", "FF00", "--hex"]);
    let b64 = ok(u, &["lookup", "cache", "/wA=", "--b64"]);
    // The same two bytes, so the same placement; only the key line (and
    // so the alignment) differs.
    let rest = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| !l.starts_with("key"))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert_eq!(rest(&hex), rest(&b64));
    assert!(b64.contains("key (base64)  /wA=\n"), "{b64}");
    check(
        u,
        "lookup_hex.json",
        &[
            "-o",
            "json",
            "lookup",
            "cache",
            "ff00",
            "--hex",
            "--replicas",
            "2",
        ],
    );
    check_failure(
        u,
        "error_lookup_hex.txt",
        1,
        &["lookup", "cache", "f\u{1b}", "--hex"],
    );
    check_failure(
        u,
        "error_lookup_b64.txt",
        1,
        &["lookup", "cache", "/w", "--b64"],
    );

    let patch = s.dir.join("patch.json");
    std::fs::write(
        &patch,
        r#"{"ops": [{"op": "update_config", "config": {"replication_factor": 2, "hash": "sha256"}}]}"#,
    )
    .unwrap();
    check(
        u,
        "change_config_dry_run.txt",
        &[
            "change",
            "apply",
            "cache",
            patch.to_str().unwrap(),
            "--dry-run",
        ],
    );
    let partial = s.dir.join("partial.json");
    std::fs::write(
        &partial,
        r#"{"ops": [{"op": "set_config", "config": {"replication_factor": 2}}]}"#,
    )
    .unwrap();
    check_failure(
        u,
        "error_partial_set_config.txt",
        1,
        &["change", "apply", "cache", partial.to_str().unwrap()],
    );
}
