//! The binary64 sum of `k` equal terms added one at a time, in a few steps
//! per power of two instead of `k` additions.
//!
//! The jump diff model adds `1 / max(n, m)` once per bucket (section 8.5),
//! so its masses carry that sequence of roundings, and they are part of
//! every diff ringd has reported. Working on runs of buckets must give the
//! same bits, not merely a closer value, so this reproduces the sequence.
//!
//! Why it can be shortened: while a partial sum `s` and the next one lie in
//! one binade `[2^e, 2^(e+1))`, both are multiples of that binade's unit in
//! the last place `u`, and `s + d` rounds to the nearest multiple of `u`.
//! Write `d = q·u + r` with `0 ≤ r < u`: the increment is `q·u` when
//! `r < u/2` and `(q+1)·u` when `r > u/2`, whatever `s` is. On a tie
//! (`r = u/2`) it depends on the parity of `s/u`, but every rounded result
//! is then even, so from the second addition inside the binade on the
//! increment is constant too. Two equal increments in one binade therefore
//! fix every later one until the sum nears the binade's top, and those
//! additions collapse into one exact multiplication. Near the top, and
//! across into the next binade, the additions are done one by one.

/// `(((0 + d) + d) + … ) + d` with `k` terms, each addition rounded as
/// binary64 does (to nearest, ties to even). `d` must be finite and > 0.
pub(crate) fn repeated_sum(d: f64, k: u64) -> f64 {
    let mut s = 0.0f64;
    let mut left = k;
    // The last increment, when it was made inside one binade.
    let mut last_step: Option<f64> = None;
    while left > 0 {
        let next = s + d;
        left -= 1;
        let inside = s > 0.0 && exponent(s) == exponent(next) && exponent(s) > 52;
        // Exact: two multiples of `u` in one binade (Sterbenz).
        let step = next - s;
        s = next;
        if !inside {
            last_step = None;
            continue;
        }
        if last_step == Some(step) && left > 0 {
            left = bulk(&mut s, step, left);
            last_step = None;
        } else {
            last_step = Some(step);
        }
    }
    s
}

/// Adds `step` to `s` for as many of the `left` remaining additions as
/// certainly stay inside `s`'s binade; returns how many remain.
fn bulk(s: &mut f64, step: f64, left: u64) -> u64 {
    const TOP: u64 = 1 << 53;
    let e = exponent(*s);
    let u = f64::from_bits((e - 52) << 52);
    // `s/u` is the significand with its leading bit; `step/u` is exact.
    let units = (s.to_bits() & ((1 << 52) - 1)) | (1 << 52);
    let per = (step / u) as u64;
    if per == 0 {
        // `d` is below half a unit here: the sum no longer moves.
        return 0;
    }
    // Addition j starts from `units + j·per` and adds less than `per + 1`
    // units, so it rounds inside the binade while that stays below
    // `2^53 − 1/2`; `units + t·per ≤ 2^53 − 2` guarantees it for all t.
    let t = left.min(TOP.saturating_sub(2 + units) / per);
    *s = (units + t * per) as f64 * u;
    left - t
}

/// The biased exponent field of a positive binary64.
fn exponent(x: f64) -> u64 {
    x.to_bits() >> 52
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive(d: f64, k: u64) -> f64 {
        (0..k).fold(0.0, |s, _| s + d)
    }

    #[test]
    fn equals_adding_one_by_one() {
        let counts = [0, 1, 2, 3, 4, 5, 7, 100, 4095, 65_536, 1_000_000];
        for n in [
            1u64,
            3,
            6,
            7,
            10,
            12,
            1 << 20,
            999_983,
            5_000_000,
            6_000_000,
        ] {
            let d = 1.0 / n as f64;
            for &k in counts.iter().chain(&[n]) {
                let k = k.min(n);
                assert_eq!(
                    repeated_sum(d, k).to_bits(),
                    naive(d, k).to_bits(),
                    "1/{n} × {k}"
                );
            }
        }
        // Below half a unit of the sum: the sum stalls, as one by one.
        let tiny = f64::EPSILON / 4.0;
        assert_eq!(repeated_sum(tiny, 3), naive(tiny, 3));
        assert_eq!(repeated_sum(1.0 + tiny, 1000), naive(1.0 + tiny, 1000));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn equals_adding_one_by_one_for_jump_steps(n in 1u64..=(1 << 23), k in any::<u64>()) {
            let d = 1.0 / n as f64;
            let k = k % (n + 1);
            prop_assert_eq!(repeated_sum(d, k).to_bits(), naive(d, k).to_bits());
        }

        #[test]
        fn equals_adding_one_by_one_for_any_term(bits in 0x3c00_0000_0000_0000u64..0x4010_0000_0000_0000, k in 0u64..200_000) {
            let d = f64::from_bits(bits);
            prop_assert_eq!(repeated_sum(d, k).to_bits(), naive(d, k).to_bits());
        }
    }
}
