//! The partition guard: when automatic drains and removals must wait.
//!
//! A network partition between ringd and its nodes looks, from ringd's
//! side, like many nodes dying at once; acting on it would empty the
//! ring. So the guard holds automatic drains and removals back while the
//! deciding instance cannot reach the store, while more than
//! `max_unhealthy_fraction` of the ring's leased nodes are unhealthy, and
//! once the ring made `max_auto_changes_per_minute` automatic changes in
//! the last minute. The rules are checked in that order; the first that
//! holds is the one reported.

use std::fmt;

use crate::ring::MembershipPolicy;

/// A rule of the guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GuardRule {
    /// The deciding instance cannot reach the store.
    StoreUnreachable,
    /// Too many leased nodes are unhealthy at once.
    UnhealthyFraction,
    /// Too many automatic changes in the last minute.
    RateLimit,
}

impl GuardRule {
    /// Every rule, in the order they are checked.
    pub const ALL: [GuardRule; 3] = [
        GuardRule::StoreUnreachable,
        GuardRule::UnhealthyFraction,
        GuardRule::RateLimit,
    ];

    /// The rule's name, as the API, the metric and the log write it.
    pub fn name(self) -> &'static str {
        match self {
            GuardRule::StoreUnreachable => "store_unreachable",
            GuardRule::UnhealthyFraction => "unhealthy_fraction",
            GuardRule::RateLimit => "rate_limit",
        }
    }
}

impl fmt::Display for GuardRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The guard holding transitions back: the rule and why, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    /// The first rule that holds.
    pub rule: GuardRule,
    /// What a person reads: the counts and the limit.
    pub detail: String,
}

/// What the guard looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct GuardInputs {
    /// Whether the store answered the last read.
    pub store_reachable: bool,
    /// Nodes of the ring with a lease (released ones included).
    pub leased: usize,
    /// Of those, the ones whose lease expired (after the grace).
    pub unhealthy: usize,
    /// Automatic changes the ring made in the last minute.
    pub recent_changes: usize,
}

/// The first rule that holds, if any.
pub(super) fn check(policy: &MembershipPolicy, g: GuardInputs) -> Option<Blocked> {
    if !g.store_reachable {
        return Some(Blocked {
            rule: GuardRule::StoreUnreachable,
            detail: "the store cannot be reached, so a node that looks dead may be a partition of this instance".into(),
        });
    }
    let fraction = policy.max_unhealthy_fraction.get();
    // Compared in integers: `unhealthy / leased > fraction` without the
    // rounding of a division (3 of 6 against 0.5 is not above it).
    if g.leased > 0 && (g.unhealthy as f64) > fraction * g.leased as f64 {
        return Some(Blocked {
            rule: GuardRule::UnhealthyFraction,
            detail: format!(
                "{} of {} leased nodes are unhealthy, more than max_unhealthy_fraction {fraction} of them",
                g.unhealthy, g.leased
            ),
        });
    }
    let limit = policy.max_auto_changes_per_minute.get() as usize;
    if g.recent_changes >= limit {
        return Some(Blocked {
            rule: GuardRule::RateLimit,
            detail: format!(
                "{} automatic changes in the last minute, the most max_auto_changes_per_minute allows",
                g.recent_changes
            ),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::MembershipPolicySpec;

    fn policy(json: &str) -> MembershipPolicy {
        serde_json::from_str::<MembershipPolicySpec>(json)
            .unwrap()
            .into()
    }

    fn inputs(reachable: bool, leased: usize, unhealthy: usize, recent: usize) -> GuardInputs {
        GuardInputs {
            store_reachable: reachable,
            leased,
            unhealthy,
            recent_changes: recent,
        }
    }

    #[test]
    fn each_rule_holds_exactly_past_its_limit_and_the_first_is_reported() {
        let p = MembershipPolicy::default();
        assert_eq!(check(&p, inputs(true, 6, 3, 9)), None);
        assert_eq!(check(&p, inputs(true, 0, 0, 0)), None);
        assert_eq!(
            check(&p, inputs(true, 5, 3, 0)),
            Some(Blocked {
                rule: GuardRule::UnhealthyFraction,
                detail: "3 of 5 leased nodes are unhealthy, more than max_unhealthy_fraction 0.5 of them".into(),
            })
        );
        assert_eq!(
            check(&p, inputs(true, 5, 0, 10)),
            Some(Blocked {
                rule: GuardRule::RateLimit,
                detail: "10 automatic changes in the last minute, the most max_auto_changes_per_minute allows".into(),
            })
        );
        let first = check(&p, inputs(false, 5, 5, 10)).unwrap();
        assert_eq!(first.rule, GuardRule::StoreUnreachable);
        assert_eq!(
            first.detail,
            "the store cannot be reached, so a node that looks dead may be a partition of this instance"
        );
        assert_eq!(
            check(&p, inputs(true, 5, 5, 10)).unwrap().rule,
            GuardRule::UnhealthyFraction
        );
        // A fraction of 1 never blocks on health: all may be unhealthy.
        let all = policy(r#"{"max_unhealthy_fraction": 1, "max_auto_changes_per_minute": 1}"#);
        assert_eq!(check(&all, inputs(true, 4, 4, 0)), None);
        assert_eq!(
            check(&all, inputs(true, 4, 4, 1)).unwrap().rule,
            GuardRule::RateLimit
        );
    }
}
