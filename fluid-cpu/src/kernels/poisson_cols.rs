//! `poisson_cols`: the column pass of the separable Poisson filter:
//! `out(x, y) = Σ_i Σ_t tap_i[t] · tmp_i(x, fold(y + t − k))`, written into `q` (mode 0), the
//! pressure (mode 1), or the pressure plus `q` (mode 2, the warm start's part).

use swirly_core::grid::pressure::poisson_filter::{MAX_TAPS, fold};
use swirly_core::grid::uniforms::FilterParams;

use super::common::{G, for_each_row, split_around};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// The filtered value at `(x, y)`: the reference that [`run`] matches bit for bit (tested).
#[inline(always)]
#[cfg_attr(not(test), expect(dead_code, reason = "the reference its row kernel is tested against"))]
pub fn column_sum(g: &G, params: &FilterParams, read: impl Fn(usize) -> f32, x: usize, y: usize) -> f32 {
    let (nx, ny, cells) = (g.nx, g.ny, g.nx * g.ny);
    let mut acc = 0.0f32;
    for i in 0..params.rank as usize {
        let bank = params.bank as usize + i * MAX_TAPS as usize;
        let tmp = params.tmp as usize + i * cells;
        for t in 0..=2 * params.k as usize {
            let ys = fold(y as i64 + t as i64 - i64::from(params.k), ny as i64, g.py);
            acc += read(bank + t) * read(tmp + ys * nx + x);
        }
    }
    acc
}

/// [`column_sum`] of every sample of row `y` into `acc`: each filter's taps in order, every tap
/// adding its multiple of one whole row of the intermediate array (`row(start)` is the row of
/// `nx` values at `start`), so that each sample sums in [`column_sum`]'s order and the loop
/// over the row vectorises.
#[inline(always)]
fn column_row<'a>(
    g: &G,
    params: &FilterParams,
    tap: impl Fn(usize) -> f32,
    row: impl Fn(usize) -> &'a [f32],
    y: usize,
    acc: &mut [f32],
) {
    let (nx, ny, cells) = (g.nx, g.ny, g.nx * g.ny);
    acc.fill(0.0);
    for i in 0..params.rank as usize {
        let bank = params.bank as usize + i * MAX_TAPS as usize;
        let tmp = params.tmp as usize + i * cells;
        for t in 0..=2 * params.k as usize {
            let ys = fold(y as i64 + t as i64 - i64::from(params.k), ny as i64, g.py);
            let (w, r) = (tap(bank + t), &row(tmp + ys * nx)[..acc.len()]);
            for (a, &x) in acc.iter_mut().zip(r) {
                *a += w * x;
            }
        }
    }
}

/// One column pass.
pub fn run(g: &G, params: &FilterParams, mg: &mut [f32], pressure: &mut [f32]) {
    let (nx, cells) = (g.nx, g.nx * g.ny);
    if params.mode == 0 {
        let (q, read) = split_around(mg, params.q as usize, cells);
        // The intermediate arrays and the taps lie outside `q`.
        let row = |start: usize| read.slice(start, nx).expect("the filter's arrays lie outside q");
        for_each_row(
            q,
            nx,
            #[inline(always)]
            |y, out| column_row(g, params, |k| read.get(k), row, y, out),
        );
        return;
    }
    let mg: &[f32] = mg;
    for_each_row(
        pressure,
        nx,
        #[inline(always)]
        |y, out| {
            column_row(g, params, |k| mg[k], |start| &mg[start..start + nx], y, out);
            if params.mode == 2 {
                for (v, &warm) in out.iter_mut().zip(&mg[params.q as usize + y * nx..][..nx]) {
                    *v += warm;
                }
            } else {
                // The reference's `+ 0.0` (it turns −0.0 into +0.0).
                for v in out.iter_mut() {
                    *v += 0.0;
                }
            }
        },
    );
}

/// The table's entry: a dispatch of `poisson_cols` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: FilterParams = d.params().unwrap_or_default();
    run(c.g, &p, s.w("mg"), s.w("pressure"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::poisson_rows;
    use swirly_core::{Boundary, Grid};

    /// Both passes against their one-sample references, bit for bit: wall and periodic axes,
    /// grids narrower than the filter (folded more than once), every mode.
    #[test]
    fn row_and_column_passes_equal_the_one_sample_sums() {
        for (b, nx, ny, k, rank) in [
            (Boundary::Wall, 23, 9, 5, 2),
            (Boundary::Periodic, 23, 9, 5, 2),
            (Boundary::Wall, 3, 2, 7, 4),
            (Boundary::Periodic, 4, 3, 9, 1),
        ] {
            let grid = Grid::new(nx, ny, 0.1, b, b).expect("grid");
            let g = G::new(&grid.uniform());
            let cells = (nx * ny) as usize;
            let (bank, tmp, q) = (0u32, 4 * MAX_TAPS, 4 * MAX_TAPS + rank * cells as u32);
            let mut rng = swirly_core::scene::SplitMix64(11);
            let mut rand = |n: usize| -> Vec<f32> { (0..n).map(|_| 4.0 * rng.next_f32() - 2.0).collect() };
            let mg0 = rand(q as usize + cells);
            let (pressure0, div) = (rand(cells), rand(cells));
            for mode in 0..3 {
                let params = FilterParams { rank, k, bank, tmp, q, mode, _pad: [0; 2] };
                if mode < 2 {
                    let mut mg = mg0.clone();
                    poisson_rows::run(&g, &params, 0.03, &pressure0, &div, &mut mg);
                    for i in 0..rank as usize {
                        let taps = |t: usize| mg0[bank as usize + i * MAX_TAPS as usize + t];
                        for y in 0..ny as usize {
                            for x in 0..nx as usize {
                                let want = poisson_rows::row_sum(&g, &params, 0.03, (&pressure0, &div), taps, x, y);
                                let got = mg[tmp as usize + i * cells + y * nx as usize + x];
                                assert_eq!(got.to_bits(), want.to_bits(), "rows mode {mode} ({x}, {y}) {b:?}");
                            }
                        }
                    }
                }
                let (mut mg, mut pressure) = (mg0.clone(), pressure0.clone());
                run(&g, &params, &mut mg, &mut pressure);
                for y in 0..ny as usize {
                    for x in 0..nx as usize {
                        let c = y * nx as usize + x;
                        let sum = column_sum(&g, &params, |k| mg0[k], x, y);
                        let (got, want) = match mode {
                            0 => (mg[q as usize + c], sum),
                            1 => (pressure[c], sum + 0.0),
                            _ => (pressure[c], sum + mg0[q as usize + c]),
                        };
                        assert_eq!(got.to_bits(), want.to_bits(), "cols mode {mode} ({x}, {y}) {b:?}");
                    }
                }
            }
        }
    }
}
