//! Bounded-load selection for hot keys, computed by each client alone.
//!
//! Consistent hashing sends every request for a key to the same node, so a
//! hot key can overload its owner. With a balance factor `c` (e.g. 1.25), a
//! request goes to the first node on the key's preference list whose
//! in-flight count is below `ceil(c × (in_flight + 1) / nodes)` — the
//! average load, counting the request being placed, times `c`. This is the
//! "consistent hashing with bounded loads" rule (Mirrokni, Thorup and
//! Zadimoghaddam) that HAProxy's `hash-balance-factor` and Envoy's
//! `hash_balance_factor` apply.
//!
//! The loads are the caller's own, so two clients may pick differently for
//! the same key; the placement itself, and every client's `owner`, stay
//! identical. Use it for requests that any replica can serve (reads of
//! cached or replicated data), not to decide where data lives.

use crate::placement::NodeId;
use crate::ring::NodeRecord;

use super::error::ClientError;
use super::view::RingView;

/// A balance factor, at least 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundedLoad {
    factor: f64,
}

impl BoundedLoad {
    /// `factor` must be a finite number ≥ 1 (1 means perfect balance, at
    /// the price of moving many requests off their owner).
    pub fn new(factor: f64) -> Result<Self, ClientError> {
        if !factor.is_finite() || factor < 1.0 {
            return Err(ClientError::InvalidSetting(format!(
                "balance factor {factor} is invalid: use a number of at least 1, e.g. 1.25"
            )));
        }
        Ok(Self { factor })
    }

    /// The factor.
    pub fn factor(&self) -> f64 {
        self.factor
    }

    /// The most requests a node may already have in flight and still take
    /// one more: `ceil(factor × (in_flight + 1) / nodes)`, where
    /// `in_flight` is the total over all active nodes. Computed in integers
    /// after scaling the factor to millionths, so every platform agrees.
    pub fn bound(&self, in_flight: u64, nodes: usize) -> u64 {
        if nodes == 0 {
            return 0;
        }
        let scaled = (self.factor * 1e6).round() as u128;
        let numerator = scaled * (u128::from(in_flight) + 1);
        let denominator = 1_000_000u128 * nodes as u128;
        u64::try_from(numerator.div_ceil(denominator)).unwrap_or(u64::MAX)
    }

    /// The node to send a request for `key` to: the first on the key's
    /// preference list whose in-flight count (`load`, asked once per active
    /// node) is below [`BoundedLoad::bound`]. Such a node always exists
    /// when `load` is consistent, since not every node can be above the
    /// average. `None` only when no node is active.
    pub fn pick<'a>(
        &self,
        view: &'a RingView,
        key: &[u8],
        load: impl Fn(&NodeId) -> u64,
    ) -> Option<&'a NodeRecord> {
        let placement = view.placement();
        let nodes = placement.nodes();
        if nodes.is_empty() {
            return None;
        }
        let loads: Vec<u64> = nodes.iter().map(|n| load(&n.id)).collect();
        let bound = self.bound(loads.iter().sum(), nodes.len());
        // Walk the preference list in growing prefixes: a hot key's owner
        // is usually under the bound, and the full list costs a walk of
        // the whole ring.
        let mut checked = 0;
        let mut r = nodes.len().min(4);
        loop {
            let list = placement.preference_indices(key, r);
            if let Some(&i) = list.iter().skip(checked).find(|&&i| loads[i] < bound) {
                return Some(view.record(i));
            }
            if r == nodes.len() {
                // Only reachable if `load` answered inconsistently.
                return list.first().map(|&i| view.record(i));
            }
            checked = list.len();
            r = (r * 4).min(nodes.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_is_the_ceiling_of_factor_times_average() {
        let b = BoundedLoad::new(1.25).unwrap();
        // (99 + 1) / 10 × 1.25 = 12.5 → 13
        assert_eq!(b.bound(99, 10), 13);
        // (0 + 1) / 4 × 1.25 = 0.3125 → 1: an idle cluster takes requests.
        assert_eq!(b.bound(0, 4), 1);
        // (7 + 1) / 8 × 1.0 = 1 exactly: no rounding up.
        assert_eq!(BoundedLoad::new(1.0).unwrap().bound(7, 8), 1);
        assert_eq!(b.bound(5, 0), 0);
    }

    #[test]
    fn factors_below_one_or_not_finite_are_refused() {
        for f in [0.99, -1.0, f64::NAN, f64::INFINITY] {
            let e = BoundedLoad::new(f).unwrap_err();
            assert!(e.to_string().contains("balance factor"), "{e}");
        }
    }
}
