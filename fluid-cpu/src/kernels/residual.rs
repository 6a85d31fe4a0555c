//! `residual`: one invocation computes the residual of the pressure equation at one cell, in
//! divergence units: `r = ∇·u* − dt ∇²p` — exactly the divergence the projected velocity keeps.
//! `‖r‖ / ‖∇·u*‖` is the relative residual `‖b − A p‖ / ‖b‖`. The pressure is the double-float
//! `pressure + pressure_lo`, differenced as in [`df_differences`], so a residual far below the
//! f32 rounding of the pressure itself can be measured.

use super::common::{G, df_differences, df_row, for_each_row};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// Residual at cell `(i, j)`; `k = dt / h²`.
#[inline(always)]
#[cfg_attr(not(test), expect(dead_code, reason = "the reference its row kernel is tested against"))]
pub fn residual_cell(g: &G, k: f32, hi: &[f32], lo: &[f32], div: &[f32], i: usize, j: usize) -> f32 {
    div[g.c(i, j)] - k * df_differences(g, hi, lo, i, j)
}

/// Fill `out` with the residual, rows through [`df_row`] (the same bits as [`residual_cell`],
/// tested).
pub fn run(g: &G, dt: f32, hi: &[f32], lo: &[f32], div: &[f32], out: &mut [f32]) {
    let k = dt * g.inv_h * g.inv_h;
    for_each_row(
        out,
        g.nx,
        #[inline(always)]
        |j, row| {
            df_row(
                g,
                (hi, lo, div),
                j,
                row,
                #[inline(always)]
                |d, sum| d - k * sum,
            )
        },
    );
}

/// The table's entry: a dispatch of `residual` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, _d: &Dispatch, s: &mut Slots<'_>) {
    if c.g.solids {
        return super::solid::residual(
            c.g,
            c.dt,
            (s.r("pressure"), s.r("pressure_lo"), s.r("divergence")),
            (s.r("u_faces"), s.r("v_faces")),
            s.w("residual"),
        );
    }
    run(c.g, c.dt, s.r("pressure"), s.r("pressure_lo"), s.r("divergence"), s.w("residual"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::{Boundary, Grid};

    #[test]
    fn residual_rows_equal_the_cell_function() {
        for (nx, ny, bx, by) in [
            (13u32, 9u32, Boundary::Wall, Boundary::Wall),
            (12, 11, Boundary::Periodic, Boundary::Periodic),
            (10, 7, Boundary::Periodic, Boundary::Wall),
            (3, 4, Boundary::Wall, Boundary::Wall),
            (2, 5, Boundary::Wall, Boundary::Periodic),
        ] {
            let grid = Grid::new(nx, ny, 0.1, bx, by).expect("grid");
            let g = G::new(&grid.uniform());
            let n = (nx * ny) as usize;
            let mut rng = swirly_core::scene::SplitMix64(11);
            let mut rand = |scale: f32| -> Vec<f32> { (0..n).map(|_| scale * (2.0 * rng.next_f32() - 1.0)).collect() };
            let (hi, lo, div) = (rand(100.0), rand(1e-5), rand(1.0));
            // And a flat pressure over signed-zero divergence: every difference is zero, and
            // the result keeps the divergence's sign.
            let flat = vec![3.0f32; n];
            let zeros: Vec<f32> = (0..n).map(|c| if c % 3 == 0 { -0.0 } else { 0.0 }).collect();
            for (hi, lo, div) in [(&hi, &lo, &div), (&flat, &zeros, &zeros)] {
                let dt = 0.02;
                let k = dt * g.inv_h * g.inv_h;
                let mut out = vec![f32::NAN; n];
                run(&g, dt, hi, lo, div, &mut out);
                for j in 0..ny as usize {
                    for i in 0..nx as usize {
                        let want = residual_cell(&g, k, hi, lo, div, i, j);
                        assert_eq!(out[g.c(i, j)].to_bits(), want.to_bits(), "({i}, {j}) {bx:?} {by:?}");
                    }
                }
            }
        }
    }
}
