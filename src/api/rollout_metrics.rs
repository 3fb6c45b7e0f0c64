//! The rollout families of `/metrics`: where each ring's active or most
//! recent rollout stands, read from the store at each scrape so every
//! instance answers the same, and the rollout versions this instance
//! committed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::ring::rollout::{RolloutRecord, RolloutState};
use crate::ring::RingName;

/// `ringd_rollout_step`, `ringd_rollout_steps`, `ringd_rollout_state`
/// (every state listed, so a state left shows as 0) and
/// `ringd_rollout_gate_share` of `rollouts`, each the newest rollout of
/// its ring with the acked share of its current step's version, then
/// `ringd_rollout_steps_committed_total` from `commits`. Ring names need
/// no label escaping: they are `[a-z0-9._-]` only.
pub fn render_rollouts(
    rollouts: &[(RolloutRecord, f64)],
    commits: &BTreeMap<RingName, u64>,
) -> String {
    let mut out = String::new();
    let mut gauge = |name: &str, help: &str, value: &dyn Fn(&RolloutRecord, f64) -> String| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
        for (r, share) in rollouts {
            let _ = writeln!(out, "{name}{{ring=\"{}\"}} {}", r.ring, value(r, *share));
        }
    };
    gauge(
        "ringd_rollout_step",
        "The step whose state the ring holds, of its active or most recent rollout (0 before the first step and after a walk back).",
        &|r, _| r.position.to_string(),
    );
    gauge(
        "ringd_rollout_steps",
        "Steps planned in the ring's active or most recent rollout.",
        &|r, _| r.step_count().to_string(),
    );
    gauge(
        "ringd_rollout_gate_share",
        "Share of the ring's live clients that acked the version of its rollout's current step, or a later one, with the server's fingerprint (1 with no live client).",
        &|_, share| share.to_string(),
    );
    out.push_str(
        "# HELP ringd_rollout_state The state of the ring's active or most recent rollout: 1 for the state it is in, 0 for the others.\n# TYPE ringd_rollout_state gauge\n",
    );
    for (r, _) in rollouts {
        for state in RolloutState::ALL {
            let _ = writeln!(
                out,
                "ringd_rollout_state{{ring=\"{}\",state=\"{}\"}} {}",
                r.ring,
                state.name(),
                u8::from(r.state == state)
            );
        }
    }
    out.push_str(
        "# HELP ringd_rollout_steps_committed_total Versions this instance committed for rollouts as the decision-maker, per ring (a walk back's included).\n# TYPE ringd_rollout_steps_committed_total counter\n",
    );
    for (ring, n) in commits {
        let _ = writeln!(
            out,
            "ringd_rollout_steps_committed_total{{ring=\"{ring}\"}} {n}"
        );
    }
    out
}
