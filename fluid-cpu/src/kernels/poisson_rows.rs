//! `poisson_rows`: the row pass of the separable Poisson filter: for each of `rank` filters,
//! `tmp_i(x, y) = Σ_t tap_i[t] · src(fold(x + t − k), y)`, with `src` the pressure (mode 0) or
//! `b = −h² ∇·u / dt` (mode 1), folded by mirroring at walls and wrapping on periodic axes.

use swirly_core::grid::pressure::poisson_filter::{MAX_TAPS, fold};
use swirly_core::grid::uniforms::FilterParams;

use super::common::{G, for_each_row_scratch, split_around};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// The source value of cell `c`: the pressure (mode 0) or `b = −h² ∇·u / dt` (mode 1).
#[inline(always)]
fn source(params: &FilterParams, scale: f32, pressure: &[f32], div: &[f32], c: usize) -> f32 {
    if params.mode == 0 { pressure[c] } else { scale * div[c] }
}

/// `tmp_i(x, y)` of one sample, with `tap(t)` filter `i`'s taps: the reference that [`run`]
/// matches bit for bit (tested).
#[inline(always)]
#[cfg_attr(not(test), expect(dead_code, reason = "the reference its row kernel is tested against"))]
pub fn row_sum(
    g: &G,
    params: &FilterParams,
    dt: f32,
    (pressure, div): (&[f32], &[f32]),
    tap: impl Fn(usize) -> f32,
    x: usize,
    y: usize,
) -> f32 {
    let scale = -g.h * g.h / dt;
    let mut acc = 0.0f32;
    for t in 0..=2 * params.k as usize {
        let xs = fold(x as i64 + t as i64 - i64::from(params.k), g.nx as i64, g.px);
        acc += tap(t) * source(params, scale, pressure, div, y * g.nx + xs);
    }
    acc
}

/// Fill the `rank` intermediate arrays. Each row first gathers its source values, folded, into
/// a row `2k` longer (`ext[m]` is the source at `fold(m − k)`); then every tap adds its
/// multiple of a shifted window of it to the whole row. Each sample still sums its taps in
/// order from zero, as [`row_sum`] does, and the loop over the row vectorises.
pub fn run(g: &G, params: &FilterParams, dt: f32, pressure: &[f32], div: &[f32], mg: &mut [f32]) {
    let (nx, cells) = (g.nx, g.nx * g.ny);
    let scale = -g.h * g.h / dt;
    let (k, width) = (params.k as usize, 2 * params.k as usize + 1);
    let rank = params.rank as usize;
    let (out, read) = split_around(mg, params.tmp as usize, rank * cells);
    for (i, arr) in out.chunks_mut(cells).enumerate() {
        let bank = params.bank as usize + i * MAX_TAPS as usize;
        let taps: Vec<f32> = (0..width).map(|t| read.get(bank + t)).collect();
        for_each_row_scratch(
            arr,
            nx,
            nx + 2 * k,
            #[inline(always)]
            |y, row, ext| {
                // The row itself in the middle; only the `k` samples past each end fold.
                let (head, rest) = ext.split_at_mut(k);
                let (mid, tail) = rest.split_at_mut(nx);
                if params.mode == 0 {
                    mid.copy_from_slice(&pressure[y * nx..][..nx]);
                } else {
                    for (e, &d) in mid.iter_mut().zip(&div[y * nx..][..nx]) {
                        *e = scale * d;
                    }
                }
                let edge = |m: usize| {
                    let xs = fold(m as i64 - k as i64, nx as i64, g.px);
                    source(params, scale, pressure, div, y * nx + xs)
                };
                for (m, e) in head.iter_mut().enumerate() {
                    *e = edge(m);
                }
                for (m, e) in tail.iter_mut().enumerate() {
                    *e = edge(k + nx + m);
                }
                row.fill(0.0);
                for (t, &tap) in taps.iter().enumerate() {
                    for (v, &e) in row.iter_mut().zip(&ext[t..t + nx]) {
                        *v += tap * e;
                    }
                }
            },
        );
    }
}

/// The table's entry: a dispatch of `poisson_rows` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: FilterParams = d.params().unwrap_or_default();
    run(c.g, &p, c.dt, s.r("pressure"), s.r("divergence"), s.w("mg"));
}
