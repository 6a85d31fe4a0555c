//! `sharp_velocity`: the sharper value of one u-face and one v-face, written over the
//! semi-Lagrangian one. MacCormack adds half the round trip's error to it; BFECC samples the
//! velocity corrected by that half error instead; either is clamped to the range of the
//! velocity at the backtrace's stencil. The cubic scheme samples the velocity there by
//! monotone cubics. Faces on walls keep their value.

use fluid_core::grid::uniforms::{SHARP_CUBIC, SHARP_MACCORMACK, SharpParams};

use super::common::sharp::{Axis, Lattice, corners, cubic, lerp2, range};
use super::common::{G, backtrace, for_each_row};
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

/// The new u at face `(i, j)`.
#[inline(always)]
pub fn sharp_u_face(
    g: &G,
    p: &SharpParams,
    dt: f32,
    (u, v): (&[f32], &[f32]),
    back: &[f32],
    hat: f32,
    i: usize,
    j: usize,
) -> f32 {
    if g.u_on_wall(i) {
        return hat;
    }
    let (bx, by) = backtrace(g, u, v, p.order, dt * g.inv_h, g.ui(i) as f32, j as f32 + 0.5);
    let w = Lattice::U.window(g, bx, by);
    sharpen(g, p, Lattice::U, (u, back), w, g.u(i, j), hat, (-p.rate * dt).exp())
}

/// The new v at face `(i, j)`.
#[inline(always)]
pub fn sharp_v_face(
    g: &G,
    p: &SharpParams,
    dt: f32,
    (u, v): (&[f32], &[f32]),
    back: &[f32],
    hat: f32,
    i: usize,
    j: usize,
) -> f32 {
    if g.v_on_wall(j) {
        return hat;
    }
    let (bx, by) = backtrace(g, u, v, p.order, dt * g.inv_h, i as f32 + 0.5, g.vj(j) as f32);
    let w = Lattice::V.window(g, bx, by);
    sharpen(g, p, Lattice::V, (v, back), w, g.v(i, j), hat, (-p.rate * dt).exp())
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, mut s: Slots<'_>) {
    let p: SharpParams = d.params().unwrap_or_default();
    let (g, dt) = (c.g, c.dt);
    let uv = (s.r(0), s.r(1));
    let (u_back, v_back) = (s.r(2), s.r(3));
    for_each_row(
        s.w(4),
        g.nx + 1,
        #[inline(always)]
        |j, row| {
            for (i, x) in row.iter_mut().enumerate() {
                *x = sharp_u_face(g, &p, dt, uv, u_back, *x, i, j);
            }
        },
    );
    for_each_row(
        s.w(5),
        g.nx,
        #[inline(always)]
        |j, row| {
            for (i, x) in row.iter_mut().enumerate() {
                *x = sharp_v_face(g, &p, dt, uv, v_back, *x, i, j);
            }
        },
    );
}
