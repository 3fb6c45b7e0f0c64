//! The membership policy flags of `ringd ring create` and `ringd ring
//! update`, and the policy's lines in `ringd ring show`.

use clap::Args;

use super::output::escape;
use crate::wire::{
    MembershipPolicyInput, MembershipPolicyView, MembershipStatusView, OnJoinName, OnLeaveName,
};

/// Policy flags; each one omitted leaves its field to the server (the
/// default on create, the ring's value on update). Delays are durations
/// such as `30s` or `10m`, or `off`.
#[derive(Debug, Clone, Default, Args)]
pub struct PolicyArgs {
    /// State a node registering with a lease joins in: active or joining
    /// [server default: active].
    #[arg(long, value_name = "STATE", value_parser = ["active", "joining"])]
    pub on_join: Option<String>,
    /// Activate a joining node after it has been healthy this long, or
    /// `off` [server default: off].
    #[arg(long, value_name = "DELAY")]
    pub activate_after: Option<String>,
    /// Drain a node after it has been unhealthy this long, or `off`
    /// [server default: off].
    #[arg(long, value_name = "DELAY")]
    pub drain_after: Option<String>,
    /// Remove an unhealthy, or left and drained, leased node after this
    /// long, or `off` [server default: off].
    #[arg(long, value_name = "DELAY")]
    pub forget_after: Option<String>,
    /// What a released lease does: remove or drain [server default:
    /// remove].
    #[arg(long, value_name = "ACTION", value_parser = ["remove", "drain"])]
    pub on_leave: Option<String>,
    /// Partition guard: no automatic drain or removal while more than
    /// this share of the leased nodes is unhealthy [server default: 0.5].
    #[arg(long, value_name = "FRACTION")]
    pub max_unhealthy_fraction: Option<f64>,
    /// Partition guard: at most this many automatic changes a minute
    /// [server default: 10].
    #[arg(long, value_name = "N")]
    pub max_auto_changes_per_minute: Option<u64>,
}

/// `off` is `null` on the wire; anything else is sent for the server to
/// check.
fn delay(flag: &Option<String>) -> Option<Option<String>> {
    flag.as_ref().map(|d| (d != "off").then(|| d.clone()))
}

impl PolicyArgs {
    /// The `membership` object these flags give, `None` if no flag is set.
    pub(super) fn input(&self) -> Option<MembershipPolicyInput> {
        let input = MembershipPolicyInput {
            on_join: self.on_join.as_deref().map(|s| match s {
                "joining" => OnJoinName::Joining,
                _ => OnJoinName::Active,
            }),
            activate_after: delay(&self.activate_after),
            drain_after: delay(&self.drain_after),
            forget_after: delay(&self.forget_after),
            on_leave: self.on_leave.as_deref().map(|s| match s {
                "drain" => OnLeaveName::Drain,
                _ => OnLeaveName::Remove,
            }),
            max_unhealthy_fraction: self.max_unhealthy_fraction,
            max_auto_changes_per_minute: self.max_auto_changes_per_minute,
        };
        let empty = serde_json::to_value(&input).is_ok_and(|v| v == serde_json::json!({}));
        (!empty).then_some(input)
    }
}

/// The policy's lines for a field list.
pub(super) fn policy_fields(p: &MembershipPolicyView) -> Vec<(&'static str, String)> {
    let delay = |d: &Option<String>| d.clone().unwrap_or_else(|| "off".to_owned());
    vec![
        (
            "on join",
            match p.on_join {
                OnJoinName::Active => "active",
                OnJoinName::Joining => "joining",
            }
            .to_owned(),
        ),
        ("activate after", delay(&p.activate_after)),
        ("drain after", delay(&p.drain_after)),
        ("forget after", delay(&p.forget_after)),
        (
            "on leave",
            match p.on_leave {
                OnLeaveName::Remove => "remove",
                OnLeaveName::Drain => "drain",
            }
            .to_owned(),
        ),
        (
            "max unhealthy fraction",
            p.max_unhealthy_fraction.to_string(),
        ),
        (
            "max auto changes/min",
            p.max_auto_changes_per_minute.to_string(),
        ),
    ]
}

/// The partition guard's lines for `ringd ring show`: its state, then one
/// line per pending transition.
pub(super) fn guard_fields(status: &MembershipStatusView) -> Vec<(&'static str, String)> {
    let guard = match (&status.guard.rule, &status.guard.detail) {
        (Some(rule), Some(detail)) => format!("blocked by {}: {}", rule.as_str(), escape(detail)),
        _ => "clear".to_owned(),
    };
    let mut out = vec![("guard", guard)];
    for p in &status.pending {
        out.push((
            "pending",
            format!(
                "{} {}: {}",
                p.transition.as_str(),
                escape(&p.node),
                escape(&p.reason)
            ),
        ));
    }
    out
}
