//! `sharp_velocity`: the sharper value of one u-face and one v-face, written over the
//! semi-Lagrangian one. MacCormack adds half the round trip's error to it; BFECC samples the
//! velocity corrected by that half error instead; either is clamped to the range of the
//! velocity at the backtrace's stencil. The cubic scheme samples the velocity there by
//! monotone cubics. Faces on walls keep their value.

use fluid_core::grid::uniforms::{SHARP_CUBIC, SHARP_MACCORMACK, SharpParams};

use super::common::sharp::{Axis, Lattice, corners, cubic, for_each_traced, lerp2, range};
use super::common::{G, for_each_row};
use crate::dispatch::{Ctx, Slots};
use fluid_core::ir::schedule::Dispatch;

/// One face's new value on `lattice` (u or v) from the field `q`, its round trip `back`, the
/// stencil `w`, its index `o` and its semi-Lagrangian value `hat`.
#[inline(always)]
pub fn sharpen(
    g: &G,
    p: &SharpParams,
    lattice: Lattice,
    (q, back): (&[f32], &[f32]),
    w: (Axis, Axis),
    o: usize,
    hat: f32,
    decay: f32,
) -> f32 {
    if p.scheme == SHARP_CUBIC {
        return cubic(g, lattice, q, 1, 0, w) * decay;
    }
    let cols = lattice.cols(g);
    let f = corners(q, cols, 1, 0, w);
    let x = if p.scheme == SHARP_MACCORMACK {
        hat + 0.5 * decay * (q[o] - back[o])
    } else {
        let b = corners(back, cols, 1, 0, w);
        let c = [0, 1, 2, 3].map(|k| 1.5 * f[k] - 0.5 * b[k]);
        lerp2(c, w.0.2, w.1.2) * decay
    };
    let (lo, hi) = range(f);
    x.max(lo * decay).min(hi * decay)
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, mut s: Slots<'_>) {
    let p: SharpParams = d.params().unwrap_or_default();
    let g = c.g;
    let uv = (s.r(0), s.r(1));
    let (u_back, v_back) = (s.r(2), s.r(3));
    let (trace, decay) = ((p.order, c.dt * g.inv_h), (-p.rate * c.dt).exp());
    for_each_row(
        s.w(4),
        g.nx + 1,
        #[inline(always)]
        |j, row| {
            let x_of = |i: usize| g.ui(i) as f32;
            for_each_traced(g, uv, trace, g.nx + 1, x_of, j as f32 + 0.5, |i, x, y| {
                if !g.u_on_wall(i) {
                    let w = Lattice::U.window(g, x, y);
                    row[i] = sharpen(g, &p, Lattice::U, (uv.0, u_back), w, g.u(i, j), row[i], decay);
                }
            });
        },
    );
    for_each_row(
        s.w(5),
        g.nx,
        #[inline(always)]
        |j, row| {
            if g.v_on_wall(j) {
                return;
            }
            let x_of = |i: usize| i as f32 + 0.5;
            for_each_traced(g, uv, trace, g.nx, x_of, g.vj(j) as f32, |i, x, y| {
                let w = Lattice::V.window(g, x, y);
                row[i] = sharpen(g, &p, Lattice::V, (uv.1, v_back), w, g.v(i, j), row[i], decay);
            });
        },
    );
}
