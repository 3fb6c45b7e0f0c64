//! A ring's membership policy: what ringd does on its own about nodes
//! that register with a lease, stop renewing it, or release it.
//!
//! It is part of the ring's config as users see it (and so versioned),
//! but not of placement: it never enters the canonical encoding or the
//! fingerprint. Validated once, as it arrives, into [`MembershipPolicy`].

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::durations::{format_duration, DurationBounds};
use crate::placement::json_integer::JsonU64;

/// The range of every policy delay: 1 s to 30 days. Below a second the
/// decision-maker's tick (250 ms) is a large part of it; beyond a month a
/// dead node is effectively never acted on, which `null` says better.
pub const POLICY_DELAY: DurationBounds = DurationBounds {
    min: Duration::from_secs(1),
    max: Duration::from_secs(30 * 24 * 3600),
};

/// Largest accepted `max_auto_changes_per_minute`.
pub const MAX_AUTO_CHANGES_PER_MINUTE: u32 = 10_000;

/// The state a node that registers with a lease joins in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnJoin {
    /// It owns keys at once.
    #[default]
    Active,
    /// It owns nothing until an operator or `activate_after` activates it.
    Joining,
}

/// What a graceful leave (a released lease) does to the node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnLeave {
    /// Removed at once.
    #[default]
    Remove,
    /// Drained; removed after `forget_after`, if set.
    Drain,
}

/// A policy delay: a duration within [`POLICY_DELAY`], written as
/// `30s`, `10m` or `1500ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct PolicyDelay(Duration);

impl PolicyDelay {
    /// Checks `d` is within [`POLICY_DELAY`].
    pub fn new(d: Duration) -> Result<Self, String> {
        if POLICY_DELAY.contains(d) {
            Ok(Self(d))
        } else {
            Err(format!(
                "`{}` is out of range; use {}, or null for off",
                format_duration(d),
                POLICY_DELAY.range()
            ))
        }
    }

    /// The duration.
    pub fn get(self) -> Duration {
        self.0
    }
}

impl fmt::Display for PolicyDelay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_duration(self.0))
    }
}

impl Serialize for PolicyDelay {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for PolicyDelay {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        POLICY_DELAY
            .parse(&text)
            .map(Self)
            .map_err(|e| serde::de::Error::custom(format!("{e}, or null for off")))
    }
}

/// `max_unhealthy_fraction`: above 0, at most 1.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize)]
#[serde(into = "f64")]
pub struct UnhealthyFraction(f64);

impl UnhealthyFraction {
    /// Checks `f` is in (0, 1].
    pub fn new(f: f64) -> Result<Self, String> {
        if f > 0.0 && f <= 1.0 {
            Ok(Self(f))
        } else {
            Err(format!(
                "{f} is out of range: use a fraction above 0 and at most 1 (0.5 = half of the leased nodes)"
            ))
        }
    }

    /// The fraction.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl From<UnhealthyFraction> for f64 {
    fn from(f: UnhealthyFraction) -> f64 {
        f.0
    }
}

impl<'de> Deserialize<'de> for UnhealthyFraction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::new(f64::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// `max_auto_changes_per_minute`: 1 to [`MAX_AUTO_CHANGES_PER_MINUTE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(into = "u32")]
pub struct ChangeRate(u32);

impl ChangeRate {
    /// Checks `n` is in range.
    pub fn new(n: u64) -> Result<Self, String> {
        match u32::try_from(n) {
            Ok(n) if (1..=MAX_AUTO_CHANGES_PER_MINUTE).contains(&n) => Ok(Self(n)),
            _ => Err(format!(
                "{n} is out of range: use 1 to {MAX_AUTO_CHANGES_PER_MINUTE}"
            )),
        }
    }

    /// The limit.
    pub fn get(self) -> u32 {
        self.0
    }
}

impl From<ChangeRate> for u32 {
    fn from(r: ChangeRate) -> u32 {
        r.0
    }
}

impl<'de> Deserialize<'de> for ChangeRate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::new(JsonU64::deserialize(d)?.0).map_err(serde::de::Error::custom)
    }
}

/// A ring's membership policy, validated. Stored inside each snapshot;
/// a snapshot stored before policies existed reads as the default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(from = "MembershipPolicySpec")]
pub struct MembershipPolicy {
    /// The state a newly registered node joins in.
    pub on_join: OnJoin,
    /// How long a joining node must be healthy before it is activated;
    /// `None`: only an operator activates it.
    pub activate_after: Option<PolicyDelay>,
    /// How long a node may be unhealthy before it is drained; `None`: never.
    pub drain_after: Option<PolicyDelay>,
    /// How long a leased node may be unhealthy, or drained after leaving,
    /// before it is removed; `None`: never.
    pub forget_after: Option<PolicyDelay>,
    /// What a released lease does to its node.
    pub on_leave: OnLeave,
    /// The partition guard: no automatic drain or removal while more than
    /// this share of the leased nodes is unhealthy.
    pub max_unhealthy_fraction: UnhealthyFraction,
    /// The partition guard: at most this many automatic changes a minute.
    pub max_auto_changes_per_minute: ChangeRate,
}

impl Default for MembershipPolicy {
    fn default() -> Self {
        Self {
            on_join: OnJoin::Active,
            activate_after: None,
            drain_after: None,
            forget_after: None,
            on_leave: OnLeave::Remove,
            max_unhealthy_fraction: UnhealthyFraction(0.5),
            max_auto_changes_per_minute: ChangeRate(10),
        }
    }
}

impl MembershipPolicy {
    /// Whether this is the default policy; stored versions leave it out,
    /// so a ring that never set one is stored byte for byte as before.
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// Reads a field that may be given as `null`: absent is `None`, `null` is
/// `Some(None)`, so a patch can turn a delay off.
fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// The wire form of a policy: every field optional, unknown fields
/// refused, each value checked as it is read (so a refusal names its
/// field). A new ring takes defaults for the omitted fields; a config
/// patch keeps the ring's ([`MembershipPolicySpec::apply_to`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MembershipPolicySpec {
    /// `active` or `joining`.
    pub on_join: Option<OnJoin>,
    /// A delay, or `null` for off.
    #[serde(default, deserialize_with = "nullable")]
    pub activate_after: Option<Option<PolicyDelay>>,
    /// A delay, or `null` for off.
    #[serde(default, deserialize_with = "nullable")]
    pub drain_after: Option<Option<PolicyDelay>>,
    /// A delay, or `null` for off.
    #[serde(default, deserialize_with = "nullable")]
    pub forget_after: Option<Option<PolicyDelay>>,
    /// `remove` or `drain`.
    pub on_leave: Option<OnLeave>,
    /// In (0, 1].
    pub max_unhealthy_fraction: Option<UnhealthyFraction>,
    /// 1 or more.
    pub max_auto_changes_per_minute: Option<ChangeRate>,
}

impl MembershipPolicySpec {
    /// `base` with every field this spec gives replaced.
    pub fn apply_to(&self, base: &MembershipPolicy) -> MembershipPolicy {
        MembershipPolicy {
            on_join: self.on_join.unwrap_or(base.on_join),
            activate_after: self.activate_after.unwrap_or(base.activate_after),
            drain_after: self.drain_after.unwrap_or(base.drain_after),
            forget_after: self.forget_after.unwrap_or(base.forget_after),
            on_leave: self.on_leave.unwrap_or(base.on_leave),
            max_unhealthy_fraction: self
                .max_unhealthy_fraction
                .unwrap_or(base.max_unhealthy_fraction),
            max_auto_changes_per_minute: self
                .max_auto_changes_per_minute
                .unwrap_or(base.max_auto_changes_per_minute),
        }
    }

    /// Whether every field this spec gives has that value in `policy`.
    pub fn agrees_with(&self, policy: &MembershipPolicy) -> bool {
        self.apply_to(policy) == *policy
    }
}

/// A policy with defaults for the omitted fields.
impl From<MembershipPolicySpec> for MembershipPolicy {
    fn from(spec: MembershipPolicySpec) -> Self {
        spec.apply_to(&MembershipPolicy::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> Result<MembershipPolicySpec, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn the_default_policy_reads_and_writes_as_documented() {
        let json = serde_json::to_value(MembershipPolicy::default()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "on_join": "active", "activate_after": null, "drain_after": null,
                "forget_after": null, "on_leave": "remove",
                "max_unhealthy_fraction": 0.5, "max_auto_changes_per_minute": 10
            })
        );
        let back: MembershipPolicy = serde_json::from_value(json).unwrap();
        assert_eq!(back, MembershipPolicy::default());
        let empty: MembershipPolicy = serde_json::from_str("{}").unwrap();
        assert_eq!(empty, MembershipPolicy::default());
    }

    #[test]
    fn a_patch_keeps_what_it_does_not_name_and_null_turns_a_delay_off() {
        let base = MembershipPolicy {
            drain_after: Some(PolicyDelay(Duration::from_secs(30))),
            forget_after: Some(PolicyDelay(Duration::from_secs(600))),
            ..MembershipPolicy::default()
        };
        let patched = spec(r#"{"drain_after": null, "on_leave": "drain"}"#)
            .unwrap()
            .apply_to(&base);
        assert_eq!(
            patched,
            MembershipPolicy {
                drain_after: None,
                on_leave: OnLeave::Drain,
                ..base
            }
        );
        let json = serde_json::to_value(base).unwrap();
        assert_eq!(json["drain_after"], "30s");
        assert_eq!(json["forget_after"], "10m");
    }

    #[test]
    fn out_of_range_values_are_refused_with_their_range() {
        let cases = [
            (r#"{"drain_after": "500ms"}"#, "`500ms` is below the 1s minimum; use 1s to 720h, or null for off at line 1 column 24"),
            (r#"{"forget_after": "31d"}"#, "`31d` has an unknown unit: use ms, s, m or h, or null for off"),
            (r#"{"forget_after": "721h"}"#, "`721h` is above the 720h maximum; use 1s to 720h, or null for off"),
            (r#"{"max_unhealthy_fraction": 0}"#, "0 is out of range: use a fraction above 0 and at most 1 (0.5 = half of the leased nodes) at line 1 column 29"),
            (r#"{"max_unhealthy_fraction": 1.5}"#, "1.5 is out of range"),
            (r#"{"max_auto_changes_per_minute": 0}"#, "0 is out of range: use 1 to 10000 at line 1 column 34"),
            (r#"{"on_join": "later"}"#, "unknown variant `later`, expected `active` or `joining`"),
            (r#"{"on_leave": "stay"}"#, "unknown variant `stay`, expected `remove` or `drain`"),
            (r#"{"drain": "1s"}"#, "unknown field `drain`"),
        ];
        for (json, expected) in cases {
            let error = spec(json).unwrap_err();
            assert!(
                error.starts_with(expected) || error.contains(expected),
                "{json}: {error}"
            );
        }
        assert_eq!(
            spec(r#"{"max_unhealthy_fraction": 1, "max_auto_changes_per_minute": 10000.0}"#)
                .unwrap()
                .apply_to(&MembershipPolicy::default())
                .max_auto_changes_per_minute
                .get(),
            10_000
        );
    }
}
