//! `clamp_speed`: one invocation scales u-face `(i, j)` and v-face `(i, j)` so that the speed
//! there is at most `max_speed`: `|(u, ṽ)|` with `ṽ` the mean of the v-faces around the u-face
//! (and `ũ` likewise), so a diagonal flow is held to `max_speed`, not to it on each axis.

use rayon::prelude::*;
use swirly_core::grid::uniforms::ForceParams;

use super::common::{G, prev};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// `a` scaled so that `|(a, b)| ≤ m`; the scale from the larger magnitude first, so no square
/// overflows. A NaN stays NaN. The WGSL's arithmetic, in its order.
#[inline(always)]
pub fn limited(m: f32, a: f32, b: f32) -> f32 {
    let k = a.abs().max(b.abs());
    if k > m {
        let (ra, rb) = (a / k, b / k);
        return ra * (m / (ra * ra + rb * rb).sqrt());
    }
    // Both within the limit on their own: the speed may still pass it.
    let s2 = a * a + b * b;
    if s2 > m * m { a * (m / s2.sqrt()) } else { a }
}

/// The mean of the faces `at(c, k)` of cells `c0` and `c1` (`k` = 0, 1: the two faces of each),
/// each on its own where the other is off the grid.
#[inline(always)]
fn mean(c0: Option<usize>, c1: Option<usize>, at: impl Fn(usize, usize) -> f32) -> f32 {
    let (mut sum, mut n) = (0.0f32, 0.0f32);
    for c in [c0, c1].into_iter().flatten() {
        sum += at(c, 0) + at(c, 1);
        n += 2.0;
    }
    sum / n
}

/// Fill `u_out` and `v_out` from `u` and `v`.
pub fn run(g: &G, p: &ForceParams, u: &[f32], v: &[f32], u_out: &mut [f32], v_out: &mut [f32]) {
    let (nx, ny, m) = (g.nx, g.ny, p.max_speed);
    u_out.par_chunks_mut(nx + 1).enumerate().for_each(|(j, row)| {
        for (i, out) in row.iter_mut().enumerate() {
            let ic = g.ui(i);
            let (il, ir) = (prev(ic, nx, g.px), (ic < nx).then_some(ic));
            let vm = mean(il, ir, |c, k| v[g.v(c, j + k)]);
            *out = limited(m, u[g.u(i, j)], vm);
        }
    });
    v_out.par_chunks_mut(nx).enumerate().for_each(|(j, row)| {
        let jc = g.vj(j);
        let (jd, ju) = (prev(jc, ny, g.py), (jc < ny).then_some(jc));
        for (i, out) in row.iter_mut().enumerate() {
            let um = mean(jd, ju, |r, k| u[g.u(i + k, r)]);
            *out = limited(m, v[g.v(i, j)], um);
        }
    });
}

/// The table's entry: a dispatch of `clamp_speed` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: ForceParams = d.params().unwrap_or_default();
    let (u, v) = (s.r("u"), s.r("v"));
    let (u_out, v_out) = (s.w("u_out"), s.w("v_out"));
    run(c.g, &p, u, v, u_out, v_out);
}

#[cfg(test)]
mod tests {
    use super::limited;

    #[test]
    fn the_speed_is_held_not_each_component() {
        // Diagonal: each component within the limit, the speed over it.
        let a = limited(1.0, 0.9, 0.9);
        assert!((a - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6, "{a}");
        // Under the limit: the same bits.
        assert_eq!(limited(1.0, 0.6, -0.7).to_bits(), 0.6f32.to_bits());
        // Huge values do not overflow into zero.
        let big = limited(2.0, 3e38, 3e38);
        assert!((big - std::f32::consts::SQRT_2).abs() < 1e-5, "{big}");
        assert!(limited(1.0, f32::NAN, 0.0).is_nan());
    }
}
