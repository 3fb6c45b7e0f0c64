//! Exact integer quotas: how many replica slots (or primaries) each zone
//! and each node of a `table` ring holds.
//!
//! Every claimant has a weight and bounds. Its exact share is
//! `clamp(λ·weight, lo, hi)`, with the one λ that makes the shares add up
//! to the total (water-filling); its quota is that share rounded down or
//! up. The units left after rounding down go where they overload least:
//! to the claims whose `(⌊e⌋ + 1) / e` is smallest, so the most loaded
//! claim, relative to its share, is as little over it as integers allow.
//! All of it is integer arithmetic, so the quotas are exact and the same
//! on every machine.

/// One claimant on a total: its weight and the bounds of its share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Claim {
    /// Relative weight, at least 1.
    pub weight: u64,
    /// Least it must get.
    pub lo: u64,
    /// Most it can take.
    pub hi: u64,
}

/// Why no quotas exist: the bounds cannot add up to the total.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shortfall {
    /// The lower bounds add up to more than the total.
    TooMuchRequired { required: u64, total: u64 },
    /// The upper bounds add up to less than the total.
    TooLittleRoom { room: u64, total: u64 },
}

/// Splits `total` among `claims`: each gets `⌊e⌋` or `⌈e⌉` of its exact
/// share `e = clamp(λ·weight, lo, hi)`, and the quotas add up to `total`.
/// The units left after rounding down go to the claims with a fractional
/// share whose `(⌊e⌋ + 1) / e` is smallest, the earlier claim first among
/// equal ones.
pub(crate) fn apportion(total: u64, claims: &[Claim]) -> Result<Vec<u64>, Shortfall> {
    let (mut quotas, mut fractional, left) = shares(total, claims)?;
    // (⌊a⌋ + 1) / a < (⌊b⌋ + 1) / b, with a = sa / weight and b = sb / weight.
    fractional.sort_by(|&(ia, fa, sa), &(ib, fb, sb)| {
        ((fa + 1) * sb).cmp(&((fb + 1) * sa)).then(ia.cmp(&ib))
    });
    for &(i, _, _) in fractional.iter().take(left) {
        quotas[i] += 1;
    }
    Ok(quotas)
}

/// Each claim's `(⌊e⌋, ⌈e⌉)` of its exact share: the range
/// [`apportion`]'s quota lies in, for a caller free to choose which claims
/// round up (as long as the quotas add up to `total`).
pub(crate) fn bounds(total: u64, claims: &[Claim]) -> Result<Vec<(u64, u64)>, Shortfall> {
    let (floors, fractional, _) = shares(total, claims)?;
    let mut out: Vec<(u64, u64)> = floors.iter().map(|&f| (f, f)).collect();
    for (i, _, _) in fractional {
        out[i].1 += 1;
    }
    Ok(out)
}

/// Claim `i`'s share in units of the free claims' weight.
type Fraction = (usize, u128, u128);

/// The floors of the exact shares, the claims whose share is fractional
/// (index, floor, share scaled by the free weight) and how many units the
/// floors leave.
fn shares(total: u64, claims: &[Claim]) -> Result<(Vec<u64>, Vec<Fraction>, usize), Shortfall> {
    let required: u64 = claims.iter().map(|c| c.lo).sum();
    let room: u64 = claims.iter().map(|c| c.hi).sum();
    if required > total {
        return Err(Shortfall::TooMuchRequired { required, total });
    }
    if room < total {
        return Err(Shortfall::TooLittleRoom { room, total });
    }
    // Water-filling: λ = rest / weight of the claims not yet fixed at a
    // bound. A λ whose clamped shares add up to more than the total lies
    // above the answer, so the claims below their `lo` there are below it
    // at the answer too and are fixed at `lo`; symmetrically for `hi`.
    // Each round fixes at least one claim.
    let mut fixed: Vec<Option<u64>> = vec![None; claims.len()];
    loop {
        let (rest, weight) = unfixed(total, claims, &fixed);
        let rest = u128::from(rest);
        if weight == 0 {
            break;
        }
        // λ = rest / weight; compared as rest·w against bound·weight.
        let mut excess: i128 = 0;
        let mut low = Vec::new();
        let mut high = Vec::new();
        for (i, (c, f)) in claims.iter().zip(&fixed).enumerate() {
            if f.is_some() {
                continue;
            }
            let share = rest * u128::from(c.weight);
            let (lo, hi) = (u128::from(c.lo) * weight, u128::from(c.hi) * weight);
            if share < lo {
                excess += (lo - share) as i128;
                low.push(i);
            } else if share > hi {
                excess -= (share - hi) as i128;
                high.push(i);
            }
        }
        let fix: Vec<(usize, bool)> = match excess.signum() {
            1 => low.into_iter().map(|i| (i, false)).collect(),
            -1 => high.into_iter().map(|i| (i, true)).collect(),
            _ => low
                .into_iter()
                .map(|i| (i, false))
                .chain(high.into_iter().map(|i| (i, true)))
                .collect(),
        };
        if fix.is_empty() {
            break;
        }
        for (i, at_hi) in fix {
            fixed[i] = Some(if at_hi { claims[i].hi } else { claims[i].lo });
        }
    }
    let (rest, weight) = unfixed(total, claims, &fixed);
    let mut quotas = vec![0u64; claims.len()];
    // Claims with a fractional share: (index, ⌊e⌋, e·weight-of-free).
    let mut fractional: Vec<(usize, u128, u128)> = Vec::new();
    let mut given = 0u64;
    for (i, (c, f)) in claims.iter().zip(&fixed).enumerate() {
        match f {
            Some(v) => quotas[i] = *v,
            None => {
                let share = u128::from(rest) * u128::from(c.weight);
                let floor = share / weight;
                quotas[i] = floor as u64;
                given += floor as u64;
                if share % weight != 0 {
                    fractional.push((i, floor, share));
                }
            }
        }
    }
    Ok((quotas, fractional, (rest - given) as usize))
}

/// What is left of `total` once the fixed claims have theirs, and the
/// weight of the claims not fixed.
fn unfixed(total: u64, claims: &[Claim], fixed: &[Option<u64>]) -> (u64, u128) {
    let rest = total - fixed.iter().flatten().sum::<u64>();
    let weight = claims
        .iter()
        .zip(fixed)
        .filter(|(_, f)| f.is_none())
        .map(|(c, _)| u128::from(c.weight))
        .sum();
    (rest, weight)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(weights: &[u64], hi: u64) -> Vec<Claim> {
        weights
            .iter()
            .map(|&weight| Claim { weight, lo: 0, hi })
            .collect()
    }

    #[test]
    fn equal_weights_split_evenly_and_the_rest_goes_to_the_first() {
        assert_eq!(apportion(10, &claims(&[1, 1, 1], 10)), Ok(vec![4, 3, 3]));
        assert_eq!(apportion(9, &claims(&[1, 1, 1], 10)), Ok(vec![3, 3, 3]));
    }

    #[test]
    fn the_units_left_go_where_they_overload_least() {
        // Shares 10·1/7 = 1.43, 10·2/7 = 2.86, 10·4/7 = 5.71: floors 1, 2,
        // 5 leave 2 units. Rounding up overloads by 2/1.43 = 1.4, 3/2.86 =
        // 1.05 and 6/5.71 = 1.05: the last two get them.
        assert_eq!(apportion(10, &claims(&[1, 2, 4], 10)), Ok(vec![1, 3, 6]));
    }

    #[test]
    fn a_heavy_claim_rounds_up_before_a_light_one_with_a_larger_remainder() {
        // Shares 11·8/110 = 0.8 and 11·102/110 = 10.2 leave one unit.
        // Largest remainder would give it to the light claim, 1.25 times
        // its share; the heavy one at 11 is only 1.08 times its share.
        assert_eq!(apportion(11, &claims(&[8, 102], 20)), Ok(vec![0, 11]));
        // Equal overloads (1/0.875 = 7/6.125): the earlier claim.
        assert_eq!(apportion(7, &claims(&[1, 7], 10)), Ok(vec![1, 6]));
    }

    #[test]
    fn a_capped_claim_passes_its_excess_to_the_others() {
        // Share of the first 12·8/10 = 9.6 > 6: it takes 6, the rest 6 is
        // split 1:1.
        assert_eq!(apportion(12, &claims(&[8, 1, 1], 6)), Ok(vec![6, 3, 3]));
    }

    #[test]
    fn a_floor_raises_a_light_claim_and_lowers_the_others() {
        let c = [
            Claim {
                weight: 1,
                lo: 5,
                hi: 10,
            },
            Claim {
                weight: 4,
                lo: 5,
                hi: 10,
            },
            Claim {
                weight: 5,
                lo: 5,
                hi: 10,
            },
        ];
        // At λ = 20/10 the first would get 2: it is raised to 5, and the
        // 15 left are split 4:5 = 6.67, 8.33.
        assert_eq!(apportion(20, &c), Ok(vec![5, 7, 8]));
        // Bounds that add up to the total leave no choice.
        assert_eq!(apportion(15, &c), Ok(vec![5, 5, 5]));
    }

    #[test]
    fn impossible_bounds_are_refused() {
        let c = [
            Claim {
                weight: 1,
                lo: 0,
                hi: 3,
            },
            Claim {
                weight: 1,
                lo: 0,
                hi: 3,
            },
        ];
        assert_eq!(
            apportion(7, &c),
            Err(Shortfall::TooLittleRoom { room: 6, total: 7 })
        );
        let c = [
            Claim {
                weight: 1,
                lo: 4,
                hi: 9,
            },
            Claim {
                weight: 1,
                lo: 4,
                hi: 9,
            },
        ];
        assert_eq!(
            apportion(7, &c),
            Err(Shortfall::TooMuchRequired {
                required: 8,
                total: 7
            })
        );
    }

    #[test]
    fn quotas_are_within_one_of_the_exact_share_and_add_up() {
        // Brute force over small cases: the exact share found by bisection
        // on λ, in floating point, is within one of each quota.
        for total in 0..40u64 {
            for w in [[1u64, 1, 1, 1], [1, 2, 3, 4], [7, 1, 1, 1], [3, 3, 9, 1]] {
                let c: Vec<Claim> = w
                    .iter()
                    .map(|&weight| Claim {
                        weight,
                        lo: 0,
                        hi: 12,
                    })
                    .collect();
                let Ok(q) = apportion(total, &c) else {
                    assert!(total > 48);
                    continue;
                };
                assert_eq!(q.iter().sum::<u64>(), total);
                let shares =
                    |l: f64| -> Vec<f64> { w.iter().map(|&x| (l * x as f64).min(12.0)).collect() };
                let (mut a, mut b) = (0.0f64, 1e6f64);
                for _ in 0..200 {
                    let m = (a + b) / 2.0;
                    if shares(m).iter().sum::<f64>() < total as f64 {
                        a = m
                    } else {
                        b = m
                    }
                }
                for (qi, e) in q.iter().zip(shares(b)) {
                    assert!(
                        (*qi as f64 - e).abs() < 1.0 + 1e-9,
                        "{total} {w:?}: {q:?} vs {e}"
                    );
                }
            }
        }
    }
}
