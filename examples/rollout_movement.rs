//! How much a rollout's steps move in total against the change made at
//! once, per algorithm: one node added to ten (weight 1; `ketama` weight
//! 100, since it steps whole weights), in 5 and in 10 steps. `ring` and
//! `rendezvous` move only onto the new node, so their steps add up to the
//! direct change; `maglev` refills its table on every step and moves some
//! slots between the other nodes too; `ketama` re-cuts every server's
//! points whenever the total weight changes.
//!
//! ```sh
//! cargo run --release --example rollout_movement
//! ```

use ringd::placement::{Algorithm, NodeId, RingConfig, Weight};
use ringd::ring::rollout::{Plan, RolloutPolicy, RolloutPolicySpec};
use ringd::ring::{ChangeOp, NodeRecord, RequestedOp, RingName, Role, Snapshot};

fn record(id: &str, weight: u64) -> NodeRecord {
    NodeRecord {
        weight: Weight::new(weight).unwrap(),
        ..NodeRecord::new(NodeId::new(id).unwrap())
    }
}

fn main() {
    let now = time::OffsetDateTime::now_utc();
    println!("| algorithm | steps | direct moved | sum of steps | sum / direct | largest step |");
    println!("|---|---|---|---|---|---|");
    for algorithm in [
        Algorithm::Ring,
        Algorithm::Rendezvous,
        Algorithm::Maglev,
        Algorithm::Ketama,
        Algorithm::Table,
    ] {
        let weight = if algorithm == Algorithm::Ketama {
            100
        } else {
            1
        };
        let config = RingConfig::new(algorithm);
        let (v1, p1) =
            Snapshot::first(RingName::new("m").unwrap(), config, Role::Admin, now).unwrap();
        let ops: Vec<ChangeOp> = (0..10)
            .map(|i| ChangeOp::Upsert {
                node: record(&format!("n-{i}"), weight),
            })
            .collect();
        let base = v1
            .propose(&p1, ops, None, Role::Admin, now)
            .unwrap()
            .unwrap();
        for steps in [5u64, 10] {
            let spec = RolloutPolicySpec {
                steps: Some(steps),
                ..RolloutPolicySpec::default()
            };
            let policy = RolloutPolicy::from_spec(&spec, algorithm).unwrap();
            let change: Vec<RequestedOp> = vec![ChangeOp::Upsert {
                node: record("n-new", weight),
            }
            .into()];
            let plan = Plan::compute(
                &base.snapshot,
                &base.placement,
                change,
                &policy,
                Role::Admin,
                now,
            )
            .unwrap();
            let direct = plan.direct.diff.moved_fraction;
            let total = plan.total_moved();
            println!(
                "| {} | {} | {:.4} | {:.4} | {:.3} | {:.4} |",
                algorithm.name(),
                plan.steps.len(),
                direct,
                total,
                total / direct,
                plan.max_step_moved()
            );
        }
    }
}
