//! The membership policy as the config shows and takes it, and the state
//! of a ring's automatic transitions and partition guard.

use serde::{Deserialize, Serialize};

use crate::ring::{MembershipPolicy, OnJoin, OnLeave};
#[cfg(feature = "server")]
use crate::wire::schema::{ChangeRateSchema, PolicyDelaySchema, UnhealthyFractionSchema};

/// `on_join`: the state a node registering with a lease joins in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum OnJoinName {
    /// Owns keys at once.
    Active,
    /// Owns nothing until an operator or `activate_after` activates it.
    Joining,
}

/// `on_leave`: what a released lease does to its node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum OnLeaveName {
    /// Removed at once.
    Remove,
    /// Drained, then removed after `forget_after` if that is set.
    Drain,
}

/// A ring's membership policy, every field shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct MembershipPolicyView {
    /// The state a node that registers with a lease joins in.
    pub on_join: OnJoinName,
    /// How long a joining node is healthy before it is activated
    /// (`30s`); `null`: only an operator activates it.
    pub activate_after: Option<String>,
    /// How long a node may be unhealthy before it is drained; `null`: never.
    pub drain_after: Option<String>,
    /// How long an unhealthy, or left and drained, leased node stays
    /// before it is removed; `null`: never.
    pub forget_after: Option<String>,
    /// What a graceful leave does.
    pub on_leave: OnLeaveName,
    /// No automatic drain or removal while more than this share of the
    /// ring's leased nodes is unhealthy.
    pub max_unhealthy_fraction: f64,
    /// At most this many automatic changes a minute.
    pub max_auto_changes_per_minute: u32,
}

impl From<&MembershipPolicy> for MembershipPolicyView {
    fn from(p: &MembershipPolicy) -> Self {
        let delay =
            |d: Option<crate::ring::membership_policy::PolicyDelay>| d.map(|d| d.to_string());
        Self {
            on_join: match p.on_join {
                OnJoin::Active => OnJoinName::Active,
                OnJoin::Joining => OnJoinName::Joining,
            },
            activate_after: delay(p.activate_after),
            drain_after: delay(p.drain_after),
            forget_after: delay(p.forget_after),
            on_leave: match p.on_leave {
                OnLeave::Remove => OnLeaveName::Remove,
                OnLeave::Drain => OnLeaveName::Drain,
            },
            max_unhealthy_fraction: p.max_unhealthy_fraction.get(),
            max_auto_changes_per_minute: p.max_auto_changes_per_minute.get(),
        }
    }
}

/// The policy fields a config body gives: each optional (a new ring or a
/// `set_config` takes the default for an omitted one, an `update_config`
/// keeps the ring's). Schema-only: the server parses a
/// `MembershipPolicySpec`.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "server", schema(example = json!({"drain_after": "30s", "forget_after": "10m"})))]
#[serde(deny_unknown_fields)]
pub struct MembershipPolicyInput {
    /// `active` (default) or `joining`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "server", schema(value_type = OnJoinName, required = false))]
    pub on_join: Option<OnJoinName>,
    /// `1s` to `720h`, or `null` (default) for off.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "server", schema(value_type = PolicyDelaySchema, required = false))]
    pub activate_after: Option<Option<String>>,
    /// `1s` to `720h`, or `null` (default) for off.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "server", schema(value_type = PolicyDelaySchema, required = false))]
    pub drain_after: Option<Option<String>>,
    /// `1s` to `720h`, or `null` (default) for off.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "server", schema(value_type = PolicyDelaySchema, required = false))]
    pub forget_after: Option<Option<String>>,
    /// `remove` (default) or `drain`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "server", schema(value_type = OnLeaveName, required = false))]
    pub on_leave: Option<OnLeaveName>,
    /// Above 0 and at most 1; defaults to 0.5.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "server", schema(value_type = UnhealthyFractionSchema, required = false))]
    pub max_unhealthy_fraction: Option<f64>,
    /// 1 to 10000; defaults to 10.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "server", schema(value_type = ChangeRateSchema, required = false))]
    pub max_auto_changes_per_minute: Option<u64>,
}

/// The partition guard rule that holds automatic transitions back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum GuardRuleName {
    /// The deciding instance cannot reach the store.
    StoreUnreachable,
    /// More than `max_unhealthy_fraction` of the leased nodes are unhealthy.
    UnhealthyFraction,
    /// `max_auto_changes_per_minute` automatic changes were made in the
    /// last minute.
    RateLimit,
}

impl GuardRuleName {
    /// The name as sent on the wire and in the metric's `rule` label.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::StoreUnreachable => "store_unreachable",
            Self::UnhealthyFraction => "unhealthy_fraction",
            Self::RateLimit => "rate_limit",
        }
    }
}

/// Whether the partition guard holds automatic drains and removals back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct GuardView {
    /// True while a rule holds automatic drains and removals back.
    pub blocked: bool,
    /// The rule, while blocked.
    pub rule: Option<GuardRuleName>,
    /// Why, in words, while blocked.
    pub detail: Option<String>,
}

/// An automatic transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TransitionName {
    /// Set the node's state to `draining`.
    Drain,
    /// Remove the node.
    Remove,
    /// Set a joining node's state to `active`.
    Activate,
}

impl TransitionName {
    /// The name as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Drain => "drain",
            Self::Remove => "remove",
            Self::Activate => "activate",
        }
    }
}

/// A transition that is due but held back by the guard.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct PendingTransitionView {
    /// The node.
    pub node: String,
    /// What would be done to it.
    pub transition: TransitionName,
    /// The reason the version would record.
    pub reason: String,
}

/// The automatic transitions of a ring, as its decision-maker last saw them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct MembershipStatusView {
    /// The partition guard.
    pub guard: GuardView,
    /// Transitions that are due but held back, by node id.
    pub pending: Vec<PendingTransitionView>,
}
