//! `poisson_cols`: the column pass of the separable Poisson filter:
//! `out(x, y) = Σ_i Σ_t tap_i[t] · tmp_i(x, fold(y + t − k))`, written into `q` (mode 0), the
//! pressure (mode 1), or the pressure plus `q` (mode 2, the warm start's part).

use fluid_core::poisson_filter::{MAX_TAPS, fold};
use fluid_core::uniforms::FilterParams;

use super::common::{Around, G, for_each_row, split_around};

/// The filtered value at `(x, y)`.
#[inline(always)]
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

/// One column pass.
pub fn run(g: &G, params: &FilterParams, mg: &mut [f32], pressure: &mut [f32]) {
    let (nx, cells) = (g.nx, g.nx * g.ny);
    if params.mode == 0 {
        let (q, read): (&mut [f32], Around<'_>) = split_around(mg, params.q as usize, cells);
        for_each_row(
            q,
            nx,
            #[inline(always)]
            |y, row| {
                for (x, v) in row.iter_mut().enumerate() {
                    *v = column_sum(g, params, |k| read.get(k), x, y);
                }
            },
        );
        return;
    }
    let mg: &[f32] = mg;
    for_each_row(
        pressure,
        nx,
        #[inline(always)]
        |y, row| {
            for (x, v) in row.iter_mut().enumerate() {
                let warm = if params.mode == 2 { mg[params.q as usize + y * nx + x] } else { 0.0 };
                *v = column_sum(g, params, |k| mg[k], x, y) + warm;
            }
        },
    );
}
