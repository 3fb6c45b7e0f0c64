//! The golden files of the stores' records (`tests/store/golden/`): the
//! fixed values both backends' tests write, and how a file is compared or,
//! with `RINGD_BLESS=1`, rewritten.
//!
//! Two kinds of file. A record as this build writes it is compared byte
//! for byte with what the store's encoder produces, so a stored shape
//! cannot change by accident; `RINGD_BLESS=1 cargo test --release --lib
//! store::` rewrites these from the code, for a change that is meant
//! (read every changed file before committing it: old files must still
//! read). A record in a shape an earlier build wrote (under `old/`) is
//! history: it is never rewritten, and it must still decode to its value.
//!
//! The values are in `snapshots` (the ring versions) and `records` (the
//! rollouts, acks and instance); this file holds how the files are read
//! and compared, and the fixed time and names both build with.

mod records;
mod snapshots;

use std::path::PathBuf;

use time::OffsetDateTime;

use crate::placement::NodeId;
use crate::ring::RingName;

pub(super) use records::{ack, ack_proxy, instance, rollout_done, rollout_paused};
pub(super) use snapshots::{cache, haproxy, jump, table, twemproxy, versions};

/// The file `rel` under `tests/store/golden/`.
fn path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/store/golden")
        .join(rel)
}

/// Asserts that `written`, a record as the store writes it, is the golden
/// file `rel`; with `RINGD_BLESS=1`, makes it so.
pub(super) fn assert_written(rel: &str, written: &[u8]) {
    assert!(
        !rel.starts_with("old/") && !rel.contains("/old/"),
        "{rel}: old shapes are history"
    );
    let path = path(rel);
    if std::env::var_os("RINGD_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("a directory")).expect("golden directory");
        std::fs::write(&path, written).expect("golden file written");
        return;
    }
    let golden = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; write it with RINGD_BLESS=1 cargo test --release --lib store::",
            path.display()
        )
    });
    assert!(
        golden == written,
        "{rel}: the store now writes\n{}\nwhere it wrote\n{}\nA stored shape changed. If that is \
         meant, keep reading the old shape (add its file under old/) and rewrite this one with \
         RINGD_BLESS=1 cargo test --release --lib store::",
        String::from_utf8_lossy(written),
        String::from_utf8_lossy(&golden),
    );
}

/// The golden file `rel`, a shape an earlier build wrote.
pub(super) fn old(rel: &str) -> String {
    let path = path(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The golden files under `dir` (relative to `tests/store/golden/`),
/// sorted, so a test can show that it reads every one of them.
pub(super) fn files_under(dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(path(&d)).expect("golden directory") {
            let entry = entry.expect("golden entry");
            let rel = format!("{d}/{}", entry.file_name().to_string_lossy());
            if entry.file_type().expect("file type").is_dir() {
                todo.push(rel);
            } else {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

/// A fixed time: `seconds` after 2026-11-30T07:33:20Z, with nanoseconds.
pub(super) fn at(seconds: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(
        (1_796_024_000 + i128::from(seconds)) * 1_000_000_000 + 123_456_789,
    )
    .expect("a time in range")
}

fn name(s: &str) -> RingName {
    RingName::new(s).expect("a ring name")
}

fn id(s: &str) -> NodeId {
    NodeId::new(s).expect("a node id")
}
