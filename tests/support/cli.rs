//! Helpers for the CLI tests (`tests/cli/`): run the real `ringd`
//! binary as a client of a test server and compare what it prints with
//! the golden files in `tests/cli/expected/`.
//!
//! `RINGD_BLESS=1 cargo test --release --test cli` rewrites the golden
//! files from the current output; read every changed file before
//! committing it.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use super::ringd::{ringd_binary, SCRUBBED_ENV};

/// `ringd ARGS` against the server at `url`, not yet started.
pub(crate) fn command(url: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(ringd_binary());
    for var in SCRUBBED_ENV {
        cmd.env_remove(var);
    }
    cmd.env("RINGD_ADDR", url)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Runs `ringd ARGS` against `url` to completion.
pub(crate) fn ringd(url: &str, args: &[&str]) -> Output {
    command(url, args).output().expect("run ringd")
}

/// Runs `ringd ARGS`, asserting success and an empty stderr; returns stdout.
pub(crate) fn ok(url: &str, args: &[&str]) -> String {
    let out = ringd(url, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ringd {args:?} failed: {stderr}");
    assert!(
        stderr.is_empty(),
        "ringd {args:?} wrote to stderr: {stderr}"
    );
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

/// Replaces every RFC 3339 timestamp (`2026-11-30T15:38:13.123Z`,
/// `…+01:00`) with `<time>`, the only part of the output that differs
/// between runs.
pub(crate) fn scrub(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        if let Some(len) = timestamp_at(&b[i..]) {
            out.push_str(&text[copied..i]);
            out.push_str("<time>");
            i += len;
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// The length of the timestamp starting at `b[0]`, if one does.
fn timestamp_at(b: &[u8]) -> Option<usize> {
    // YYYY-MM-DDTHH:MM:SS, digits where the shape has `d`.
    const SHAPE: &[u8] = b"dddd-dd-ddTdd:dd:dd";
    if b.len() < SHAPE.len() {
        return None;
    }
    for (c, s) in b.iter().zip(SHAPE) {
        let fits = if *s == b'd' {
            c.is_ascii_digit()
        } else {
            c == s
        };
        if !fits {
            return None;
        }
    }
    let mut n = SHAPE.len();
    if b.get(n) == Some(&b'.') {
        n += 1;
        let digits = b[n..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        n += digits;
    }
    match b.get(n) {
        Some(b'Z') => Some(n + 1),
        Some(b'+' | b'-') => {
            let off = b.get(n + 1..n + 6)?;
            let shape_ok = off[0].is_ascii_digit()
                && off[1].is_ascii_digit()
                && off[2] == b':'
                && off[3].is_ascii_digit()
                && off[4].is_ascii_digit();
            shape_ok.then_some(n + 6)
        }
        _ => None,
    }
}

fn expected_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli/expected")
        .join(name)
}

/// Compares `actual` (after [`scrub`]) with `tests/cli/expected/<name>`,
/// or writes it there when `RINGD_BLESS=1`.
pub(crate) fn golden(name: &str, actual: &str) {
    let actual = scrub(actual);
    let path = expected_path(name);
    if std::env::var_os("RINGD_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with RINGD_BLESS=1 to create it, then read it",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "output differs from {}\n--- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
}

/// Runs `ringd ARGS` expecting success; compares stdout with `<name>`.
pub(crate) fn check(url: &str, name: &str, args: &[&str]) -> String {
    let stdout = ok(url, args);
    golden(name, &stdout);
    stdout
}

/// Runs `ringd ARGS` expecting exit code `code`, nothing on stdout, and
/// stderr equal to `<name>`.
pub(crate) fn check_failure(url: &str, name: &str, code: i32, args: &[&str]) {
    let out = ringd(url, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "ringd {args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "ringd {args:?} printed to stdout");
    golden(name, &stderr);
}

#[test]
fn scrub_replaces_timestamps_and_only_them() {
    assert_eq!(
        scrub("at 2026-11-30T15:38:13.1234Z and 2026-11-30T15:38:13Z, 2026-11-30T16:00:00+01:00."),
        "at <time> and <time>, <time>."
    );
    // Not timestamps: no zone, a bare date, a fingerprint.
    let kept = "2026-11-30T15:38:13 2026-11-30 ab12cd34ef 1234-56-78T90:12:34.Z";
    assert_eq!(scrub(kept), kept);
}
