//! The SQLite store's stored shapes against the golden files under
//! `tests/store/golden/sqlite/` (see `store/golden.rs`): a `snapshots`
//! row per fixed version, column by column, and a `rollouts` record; and
//! the rows and records earlier builds wrote, which must still read.

use crate::ring::{ChangeRecord, Snapshot};
use crate::store::golden::{self, assert_written, files_under, old};

use crate::store::sqlite::record::{decode_change, decode_snapshot, SnapshotRow};
use crate::store::sqlite::rollouts;

/// A `snapshots` row as its golden file holds it: one `column: value`
/// line per column that is not its key, each value exactly as stored.
fn row_text(row: &SnapshotRow) -> String {
    format!(
        "version: {}\ncreated_at: {}\nfingerprint: {}\nchange: {}\nsnapshot: {}\n",
        row.version, row.created_at, row.fingerprint, row.change, row.snapshot
    )
}

/// The columns of a golden row file.
fn columns(text: &str) -> SnapshotRow {
    let mut lines = text
        .lines()
        .map(|l| l.split_once(": ").expect("`column: value`"));
    let mut next = |name: &str| {
        let (column, value) = lines.next().expect("a column");
        assert_eq!(column, name);
        value.to_owned()
    };
    SnapshotRow {
        version: next("version").parse().expect("a version"),
        created_at: next("created_at"),
        fingerprint: next("fingerprint"),
        change: next("change"),
        snapshot: next("snapshot"),
    }
}

/// Asserts that `row` reads back as `s`, as the store reads it: the whole
/// version from `snapshot`, and its history entry from the narrow columns.
fn assert_reads_as(file: &str, row: &SnapshotRow, s: &Snapshot) {
    assert_eq!(row.version, s.version as i64, "{file}");
    assert_eq!(
        decode_snapshot(&s.ring, s.version, &row.snapshot).expect(file),
        *s,
        "{file}"
    );
    let change: ChangeRecord = decode_change(&row.change).expect(file);
    assert_eq!(change, s.change, "{file}");
    let created_at = time::OffsetDateTime::parse(
        &row.created_at,
        &time::format_description::well_known::Rfc3339,
    );
    assert_eq!(created_at.expect(file), s.created_at, "{file}");
    assert_eq!(row.fingerprint.parse().ok(), Some(s.fingerprint), "{file}");
}

/// The current shape's files: each row and record this build writes.
fn written() -> Vec<String> {
    let mut files: Vec<String> = golden::versions()
        .iter()
        .map(|(name, _)| format!("sqlite/snapshots.{name}.row"))
        .collect();
    files.extend(["sqlite/rollout.done.json", "sqlite/rollout.paused.json"].map(String::from));
    files
}

#[test]
fn every_version_is_written_as_its_golden_row_and_reads_back() {
    for (name, s) in golden::versions() {
        let file = format!("sqlite/snapshots.{name}.row");
        let row = SnapshotRow::encode(&s).expect("a row");
        assert_written(&file, row_text(&row).as_bytes());
        assert_reads_as(&file, &row, &s);
    }
}

#[test]
fn rollouts_are_written_as_their_golden_records_and_read_back() {
    for (file, r) in [
        ("sqlite/rollout.paused.json", golden::rollout_paused()),
        ("sqlite/rollout.done.json", golden::rollout_done()),
    ] {
        let text = rollouts::encode(&r).expect("a record");
        assert_written(file, text.as_bytes());
        assert_eq!(rollouts::decode("cache", 2, &text).expect(file), r);
    }
}

/// Rows earlier builds wrote, named after the commit that began writing
/// that shape, and the version each holds.
fn old_rows() -> Vec<(&'static str, Snapshot)> {
    let version = |name: &str| {
        golden::versions()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| s)
            .expect("a fixed version")
    };
    vec![
        // From the first schema until bucket orders were written as runs:
        // the jump order one entry per bucket (`buckets`), `table_size` in
        // every config, and no policy.
        ("sqlite/old/snapshots.af8824f.jump-3.row", version("jump-3")),
        // Runs (`bucket_runs`), still `table_size` and no policy.
        ("sqlite/old/snapshots.c188f17.jump-3.row", version("jump-3")),
        // Policies: written out even when the default, until 30ab87b; a
        // `set_config` op records its policy beside the config.
        ("sqlite/old/snapshots.be06a59.jump-3.row", version("jump-3")),
        (
            "sqlite/old/snapshots.be06a59.cache-1.row",
            version("cache-1"),
        ),
        // `table` rings (table, moves and `partitions`), `table_size` still
        // in every config.
        (
            "sqlite/old/snapshots.71d3aa2.table-3.row",
            version("table-3"),
        ),
        // Node ramps, until d638508 wrote `table_size` for `maglev` only.
        (
            "sqlite/old/snapshots.4d048a9.cache-3.row",
            version("cache-3"),
        ),
    ]
}

#[test]
fn rows_written_by_earlier_builds_still_read() {
    for (file, s) in old_rows() {
        assert_reads_as(file, &columns(&old(file)), &s);
    }
}

#[test]
fn rollouts_written_by_earlier_builds_still_read() {
    // Written from fe4b2ad, the first rollouts, until ae2075d added
    // `rebase` (which reads as false).
    let file = "sqlite/old/rollout.fe4b2ad.paused.json";
    let text = old(file);
    assert!(!text.contains("rebase"), "{file}");
    assert_eq!(
        rollouts::decode("cache", 2, &text).expect(file),
        golden::rollout_paused()
    );
}

#[test]
fn every_golden_file_is_checked() {
    let mut checked = written();
    checked.extend(old_rows().into_iter().map(|(f, _)| f.to_owned()));
    checked.push("sqlite/old/rollout.fe4b2ad.paused.json".to_owned());
    checked.sort();
    assert_eq!(files_under("sqlite"), checked);
}
