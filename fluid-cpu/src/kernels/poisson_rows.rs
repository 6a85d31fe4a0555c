//! `poisson_rows`: the row pass of the separable Poisson filter: for each of `rank` filters,
//! `tmp_i(x, y) = Σ_t tap_i[t] · src(fold(x + t − k), y)`, with `src` the pressure (mode 0) or
//! `b = −h² ∇·u / dt` (mode 1), folded by mirroring at walls and wrapping on periodic axes.

use fluid_core::poisson_filter::{MAX_TAPS, fold};
use fluid_core::uniforms::FilterParams;

use super::common::{G, for_each_row, split_around};

/// Fill the `rank` intermediate arrays.
pub fn run(g: &G, params: &FilterParams, dt: f32, pressure: &[f32], div: &[f32], mg: &mut [f32]) {
    let (nx, cells) = (g.nx, g.nx * g.ny);
    let scale = -g.h * g.h / dt;
    let src = |c: usize| if params.mode == 0 { pressure[c] } else { scale * div[c] };
    let rank = params.rank as usize;
    let (out, read) = split_around(mg, params.tmp as usize, rank * cells);
    for (i, arr) in out.chunks_mut(cells).enumerate() {
        let bank = params.bank as usize + i * MAX_TAPS as usize;
        for_each_row(
            arr,
            nx,
            #[inline(always)]
            |y, row| {
                for (x, v) in row.iter_mut().enumerate() {
                    let mut acc = 0.0f32;
                    for t in 0..=2 * params.k as usize {
                        let xs = fold(x as i64 + t as i64 - i64::from(params.k), nx as i64, g.px);
                        acc += read.get(bank + t) * src(y * nx + xs);
                    }
                    *v = acc;
                }
            },
        );
    }
}
