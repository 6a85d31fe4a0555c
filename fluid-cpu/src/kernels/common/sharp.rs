//! Shared by the sharper advection passes (`back_*`, `sharp_*`): the twin of
//! `shared/sharp.wgsl`. The stencil of a point on any of the grid's three lattices, its
//! four-sample extension and monotone cubic interpolation.

use swirly_core::grid::uniforms::{SHARP_CUBIC, SHARP_MACCORMACK, SharpParams};

use super::{G, LANES, backtrace_lanes, clamp_or_wrap, stencil, velocity_lanes};

/// An axis of a bilinear stencil: `(i0, i1, t)`.
pub type Axis = (usize, usize, f32);

/// Where a field's samples sit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lattice {
    /// Cell centres.
    Cells,
    /// x-faces.
    U,
    /// y-faces.
    V,
}

impl Lattice {
    /// The bilinear stencil of point `(x, y)` (cell units).
    #[inline(always)]
    pub fn window(self, g: &G, x: f32, y: f32) -> (Axis, Axis) {
        let (u, v) = (self == Lattice::U, self == Lattice::V);
        let sx = stencil(x - if u { 0.0 } else { 0.5 }, g.nx, u, g.px);
        let sy = stencil(y - if v { 0.0 } else { 0.5 }, g.ny, v, g.py);
        (sx, sy)
    }

    /// Samples per row.
    #[inline(always)]
    pub fn cols(self, g: &G) -> usize {
        if self == Lattice::U { g.nx + 1 } else { g.nx }
    }
}

/// The samples before and after a stencil's pair along an axis of `n` cells (`faces`: samples
/// at `0..=n`): walls repeat the end sample, periodic axes wrap.
#[inline(always)]
pub fn outer(s: Axis, n: usize, faces: bool, periodic: bool) -> (usize, usize) {
    let count = if faces && !periodic { n + 1 } else { n };
    (clamp_or_wrap(s.0, -1, count, periodic), clamp_or_wrap(s.1, 1, count, periodic))
}

/// Cubic Hermite between `f1` (`t = 0`) and `f2` (`t = 1`) with central slopes limited to the
/// Fritsch–Carlson region (zero against the step's sign, at most three times it): the result
/// stays between `f1` and `f2` (Fedkiw, Stam & Jensen 2001).
#[inline(always)]
pub fn mono_cubic(f0: f32, f1: f32, f2: f32, f3: f32, t: f32) -> f32 {
    let delta = f2 - f1;
    let sg = if delta >= 0.0 { 1.0 } else { -1.0 };
    let lim = 3.0 * delta.abs();
    let d1 = sg * (sg * 0.5 * (f2 - f0)).max(0.0).min(lim);
    let d2 = sg * (sg * 0.5 * (f3 - f1)).max(0.0).min(lim);
    let c2 = 3.0 * delta - 2.0 * d1 - d2;
    let c3 = d1 + d2 - 2.0 * delta;
    f1 + t * (d1 + t * (c2 + t * c3))
}

/// The dissipation map of a scalar relaxing to `ambient`.
#[inline(always)]
pub fn dissipate(x: f32, ambient: f32, decay: f32) -> f32 {
    ambient + (x - ambient) * decay
}

/// Channel `ch` of the stencil's four samples `(c00, c10, c01, c11)` of a field with `cols`
/// samples per row and `channels` values per sample.
#[inline(always)]
pub fn corners(data: &[f32], cols: usize, channels: usize, ch: usize, (sx, sy): (Axis, Axis)) -> [f32; 4] {
    let at = |i: usize, j: usize| data[(j * cols + i) * channels + ch];
    [at(sx.0, sy.0), at(sx.1, sy.0), at(sx.0, sy.1), at(sx.1, sy.1)]
}

/// The bilinear value of four corners, in `bilerp`'s arithmetic.
#[inline(always)]
pub fn lerp2(c: [f32; 4], tx: f32, ty: f32) -> f32 {
    let a = c[0] + (c[1] - c[0]) * tx;
    let b = c[2] + (c[3] - c[2]) * tx;
    a + (b - a) * ty
}

/// The smallest and largest of four values.
#[inline(always)]
pub fn range(c: [f32; 4]) -> (f32, f32) {
    (c[0].min(c[1]).min(c[2].min(c[3])), c[0].max(c[1]).max(c[2].max(c[3])))
}

/// The monotone cubic sample of channel `ch` of a field on `lattice` through the 4 × 4
/// samples round the stencil `w`: along x on each of four rows, then along y.
#[inline(always)]
pub fn cubic(g: &G, lattice: Lattice, data: &[f32], channels: usize, ch: usize, w: (Axis, Axis)) -> f32 {
    let (sx, sy) = w;
    let (xm, xp) = outer(sx, g.nx, lattice == Lattice::U, g.px);
    let (ym, yp) = outer(sy, g.ny, lattice == Lattice::V, g.py);
    let cols = lattice.cols(g);
    let at = |i: usize, j: usize| data[(j * cols + i) * channels + ch];
    let row = |j: usize| mono_cubic(at(xm, j), at(sx.0, j), at(sx.1, j), at(xp, j), sx.2);
    mono_cubic(row(ym), row(sy.0), row(sy.1), row(yp), sy.2)
}

/// Trace the `n` samples of a row back by `s` (cells per unit velocity; negative: forward),
/// [`LANES`] at a time through [`backtrace_lanes`], and hand each sample's point to `f(i, x,
/// y)`. `x_of(i)` is sample `i`'s x and `y` the row's (cell units).
#[inline(always)]
pub fn for_each_traced(
    g: &G,
    (u, v): (&[f32], &[f32]),
    (order, s): (u32, f32),
    n: usize,
    x_of: impl Fn(usize) -> f32,
    y: f32,
    mut f: impl FnMut(usize, f32, f32),
) {
    for i0 in (0..n).step_by(LANES) {
        let xs: [f32; LANES] = std::array::from_fn(|k| x_of((i0 + k).min(n - 1)));
        let ys = [y; LANES];
        let k1 = velocity_lanes(g, u, v, &xs, &ys);
        let (bx, by) = backtrace_lanes(g, u, v, order, s, &xs, &ys, k1);
        for k in 0..LANES.min(n - i0) {
            f(i0 + k, bx[k], by[k]);
        }
    }
}

/// Channel `ch` of one sample's new value on `lattice`: the field `q` and its round trip
/// `back` with `channels` values per sample, the stencil `w`, the sample's index `k` (of its
/// first channel's value), its semi-Lagrangian value `hat` and the dissipation
/// `(ambient, decay)` (the velocity's ambient is 0). MacCormack adds half the round trip's
/// error; BFECC samples the field corrected by that half error; either is clamped to the
/// stencil's range; the cubic scheme samples by monotone cubics.
#[inline(always)]
pub fn sharpen(
    g: &G,
    p: &SharpParams,
    lattice: Lattice,
    (q, back): (&[f32], &[f32]),
    (channels, ch): (usize, usize),
    w: (Axis, Axis),
    k: usize,
    hat: f32,
    (ambient, decay): (f32, f32),
) -> f32 {
    if p.scheme == SHARP_CUBIC {
        return dissipate(cubic(g, lattice, q, channels, ch, w), ambient, decay);
    }
    let cols = lattice.cols(g);
    let f = corners(q, cols, channels, ch, w);
    let x = if p.scheme == SHARP_MACCORMACK {
        let k = k + ch;
        hat + 0.5 * decay * (q[k] - back[k])
    } else {
        let b = corners(back, cols, channels, ch, w);
        let m = [0, 1, 2, 3].map(|k| 1.5 * f[k] - 0.5 * b[k]);
        dissipate(lerp2(m, w.0.2, w.1.2), ambient, decay)
    };
    let (lo, hi) = range(f);
    x.max(dissipate(lo, ambient, decay)).min(dissipate(hi, ambient, decay))
}
