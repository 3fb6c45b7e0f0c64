//! The rules a `table` must meet, as `docs/placement-spec.md` section 5.6
//! and check 7 of 2.4 state them, computed here without the placement
//! core: which node sets are refused, and for the others, each row's
//! distinct nodes, the zone rule and the exact quotas with their rounding.

use std::cmp::Ordering;

use ringd::placement::table::PartitionTable;
use ringd::placement::{Node, PlacementError};

/// `num / den`, both non-negative.
#[derive(Debug, Clone, Copy)]
struct Ratio {
    num: u128,
    den: u128,
}

impl Ratio {
    fn cmp(self, other: Ratio) -> Ordering {
        (self.num * other.den).cmp(&(other.num * self.den))
    }
}

/// One claim on a total: its weight and the bounds of its share.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Claim {
    pub weight: u128,
    pub lo: u128,
    pub hi: u128,
}

/// Each claim's exact share `clamp(λ·weight, lo, hi)` for the λ at which
/// they add up to `total`, over one common denominator: λ is found on the
/// piecewise-linear sum between the points where a claim meets a bound.
fn exact_shares(total: u128, claims: &[Claim]) -> (Vec<u128>, u128) {
    let at = |l: Ratio| -> Ratio {
        // Σ clamp(l·w, lo, hi), over l's denominator.
        let num = claims
            .iter()
            .map(|c| (l.num * c.weight).clamp(c.lo * l.den, c.hi * l.den))
            .sum();
        Ratio { num, den: l.den }
    };
    let mut points: Vec<Ratio> = vec![Ratio { num: 0, den: 1 }];
    for c in claims {
        points.push(Ratio {
            num: c.lo,
            den: c.weight,
        });
        points.push(Ratio {
            num: c.hi,
            den: c.weight,
        });
    }
    points.sort_by(|a, b| a.cmp(*b));
    let goal = |r: Ratio| r.cmp(Ratio { num: total, den: 1 });
    // The last point whose sum is at most the total, and the next one.
    let k = points
        .iter()
        .rposition(|&l| goal(at(l)) != Ordering::Greater)
        .expect("the lower bounds fit the total");
    let low = points[k];
    let lambda = match points.get(k + 1) {
        Some(&high) if goal(at(low)) == Ordering::Less => {
            // Linear between `low` and `high`: the free weight is that of
            // the claims strictly between their bounds there.
            let free: u128 = claims
                .iter()
                .filter(|c| {
                    Ratio {
                        num: c.lo,
                        den: c.weight,
                    }
                    .cmp(low)
                        != Ordering::Greater
                        && Ratio {
                            num: c.hi,
                            den: c.weight,
                        }
                        .cmp(high)
                            != Ordering::Less
                })
                .map(|c| c.weight)
                .sum();
            let s = at(low);
            // λ = low + (total − S(low)) / free.
            Ratio {
                num: low.num * s.den * free + (total * s.den - s.num) * low.den,
                den: low.den * s.den * free,
            }
        }
        _ => low,
    };
    let shares = claims
        .iter()
        .map(|c| (lambda.num * c.weight).clamp(c.lo * lambda.den, c.hi * lambda.den))
        .collect();
    (shares, lambda.den)
}

/// Asserts that `got` is the apportionment of `total` among `claims` that
/// 5.6.2 states: each gets `⌊e⌋` or `⌈e⌉` of its exact share `e`, and the
/// units left after rounding down go to the smallest `(⌊e⌋ + 1) / e`, the
/// earlier claim first among equals.
pub(crate) fn assert_apportioned(total: u128, claims: &[Claim], got: &[u128], what: &str) {
    assert_eq!(got.iter().sum::<u128>(), total, "{what}: {got:?}");
    let (shares, den) = exact_shares(total, claims);
    let floor: Vec<u128> = shares.iter().map(|s| s / den).collect();
    let mut fractional: Vec<usize> = (0..claims.len())
        .filter(|&i| shares[i] % den != 0)
        .collect();
    // (⌊a⌋ + 1) / a against (⌊b⌋ + 1) / b, the shares over one denominator.
    fractional.sort_by(|&a, &b| {
        ((floor[a] + 1) * shares[b])
            .cmp(&((floor[b] + 1) * shares[a]))
            .then(a.cmp(&b))
    });
    let left = (total - floor.iter().sum::<u128>()) as usize;
    let mut want = floor.clone();
    for &i in &fractional[..left] {
        want[i] += 1;
    }
    assert_eq!(got, want, "{what}: shares {shares:?} / {den}");
}

/// The refusal check 7 of 2.4 predicts: with `zone_aware` and `r ≥ Z`,
/// the first zone (in name order) with `10·W > 11·w·r`, as its name, its
/// weight and `W`.
pub(crate) fn refusal(rf: usize, zone_aware: bool, nodes: &[Node]) -> Option<(String, u64, u64)> {
    let mut zones: Vec<&str> = nodes
        .iter()
        .map(|n| n.zone.as_ref().unwrap().as_str())
        .collect();
    zones.sort_unstable();
    zones.dedup();
    let r = rf.min(nodes.len()) as u128;
    if !zone_aware || r < zones.len() as u128 {
        return None;
    }
    let weight_of = |z: &str| -> u64 {
        nodes
            .iter()
            .filter(|n| n.zone.as_ref().unwrap().as_str() == z)
            .map(|n| u64::from(n.weight.get()))
            .sum()
    };
    let total: u64 = nodes.iter().map(|n| u64::from(n.weight.get())).sum();
    zones
        .iter()
        .find(|z| 10 * u128::from(total) > 11 * u128::from(weight_of(z)) * r)
        .map(|z| (z.to_string(), weight_of(z), total))
}

/// Asserts that a refusal is the one [`refusal`] predicts.
pub(crate) fn assert_refused_as_predicted(e: &PlacementError, predicted: &(String, u64, u64)) {
    match e {
        PlacementError::ZoneTooLight {
            zone,
            weight,
            total_weight,
            ..
        } => assert_eq!(
            (zone.clone(), *weight, *total_weight),
            *predicted,
            "refused for another zone"
        ),
        other => panic!("refused with {other:?}, not as {predicted:?}"),
    }
}

/// Asserts every rule of 5.6 for `table` over `nodes` (active, in id
/// order): the shape, `r` distinct nodes per row, the zone rule, and each
/// zone's and node's replicas as apportioned by weight.
pub(crate) fn assert_valid(
    t: &PartitionTable,
    partitions: u32,
    rf: usize,
    zone_aware: bool,
    nodes: &[Node],
) {
    let (p, n) = (u128::from(partitions), nodes.len());
    let r = rf.min(n);
    assert_eq!((t.partitions(), t.replicas()), (partitions, r));
    let mut names: Vec<&str> = nodes
        .iter()
        .map(|x| x.zone.as_ref().unwrap().as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    let zone_of: Vec<usize> = nodes
        .iter()
        .map(|x| {
            let name = x.zone.as_ref().unwrap().as_str();
            if zone_aware {
                names.binary_search(&name).unwrap()
            } else {
                0
            }
        })
        .collect();
    let zones = if zone_aware { names.len() } else { 1 };
    let mut held = vec![0u128; n];
    for q in 0..partitions as usize {
        let row = t.row(q);
        let mut distinct = row.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), r, "partition {q}: {row:?}");
        if zone_aware {
            let mut spanned: Vec<usize> = row.iter().map(|&x| zone_of[x as usize]).collect();
            spanned.sort_unstable();
            spanned.dedup();
            assert_eq!(spanned.len(), r.min(zones), "partition {q}: {row:?}");
        }
        for &x in row {
            held[x as usize] += 1;
        }
    }
    // Zone totals: at least one replica of every partition when every
    // zone must be in every row, at most min(nodes, most per row) of each.
    let most = if !zone_aware {
        r
    } else if r <= zones {
        1
    } else {
        r - zones + 1
    };
    let every = zone_aware && r >= zones;
    let members = |z: usize| -> Vec<usize> { (0..n).filter(|&i| zone_of[i] == z).collect() };
    let zone_claims: Vec<Claim> = (0..zones)
        .map(|z| Claim {
            weight: members(z)
                .into_iter()
                .map(|i| u128::from(nodes[i].weight.get()))
                .sum(),
            lo: if every { p } else { 0 },
            hi: members(z).len().min(most) as u128 * p,
        })
        .collect();
    let zone_held: Vec<u128> = (0..zones)
        .map(|z| members(z).into_iter().map(|i| held[i]).sum())
        .collect();
    assert_apportioned(p * r as u128, &zone_claims, &zone_held, "zones");
    for (z, &total) in zone_held.iter().enumerate() {
        let claims: Vec<Claim> = members(z)
            .into_iter()
            .map(|i| Claim {
                weight: u128::from(nodes[i].weight.get()),
                lo: 0,
                hi: p,
            })
            .collect();
        let got: Vec<u128> = members(z).into_iter().map(|i| held[i]).collect();
        assert_apportioned(total, &claims, &got, &format!("nodes of zone {z}"));
    }
}
