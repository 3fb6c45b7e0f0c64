//! `ringd rollout`: the plan, a start, `status --watch` following it to
//! the end, the status of a finished rollout, and a control it refuses.

use crate::support::cli::{check, check_failure, ok, ringd};
use crate::support::ringd::Ringd;

#[test]
fn plan_start_watch_and_status() {
    let s = Ringd::sqlite().start();
    let u = s.url.as_str();
    ok(u, &["ring", "create", "cache", "--vnodes-per-weight", "40"]);
    for n in ["a", "b", "c", "d"] {
        ok(u, &["node", "add", "cache", n]);
    }
    let file = s.dir.join("rollout.json");
    std::fs::write(
        &file,
        r#"{"ops": [{"op": "upsert", "node": {"id": "e"}}], "reason": "add e", "policy": {"gate": 1}}"#,
    )
    .unwrap();
    let file = file.to_str().unwrap();
    check(
        u,
        "rollout_plan.txt",
        &["rollout", "plan", "cache", file, "--steps", "4"],
    );
    check(
        u,
        "rollout_start.txt",
        &[
            "rollout",
            "start",
            "cache",
            file,
            "--steps",
            "4",
            "--min-dwell",
            "0s",
        ],
    );
    // No client follows the ring, so every gate is open: it runs through.
    let out = ringd(u, &["rollout", "status", "cache", "--watch"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let last = stdout.lines().last().unwrap();
    assert_eq!(last, format!("step 4/4 {} done", "█".repeat(40)));
    check(
        u,
        "rollout_status_done.txt",
        &["rollout", "status", "cache", "1"],
    );
    check_failure(
        u,
        "error_rollout_pause_done.txt",
        1,
        &["rollout", "pause", "cache", "1"],
    );
}
