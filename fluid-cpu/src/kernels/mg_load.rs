//! `mg_load`: level 0 of the multigrid hierarchy from the simulation fields. In
//! [`LOAD_COPY`] mode `b = −h² ∇·u / dt` (the scaling of the Jacobi kernels) and `p` = the
//! previous pressure, or zero for a cold start; in [`LOAD_RESIDUAL`] mode `b` is the residual of
//! the double-float pressure `pressure + pressure_lo` and `p` is left alone (with a cold start
//! `b` is just the scaled divergence, and the pressure is set to zero).

use rayon::prelude::*;
#[cfg(doc)]
use swirly_core::grid::pressure::multigrid::LOAD_COPY;
use swirly_core::grid::pressure::multigrid::LOAD_RESIDUAL;
use swirly_core::grid::uniforms::MgParams;

use super::common::{G, df_differences, df_row, for_each_row};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// `b` at cell `(i, j)` in [`LOAD_RESIDUAL`] mode: `−h² ∇·u / dt − A (hi + lo)`.
#[inline(always)]
#[cfg_attr(not(test), expect(dead_code, reason = "the reference its row kernel is tested against"))]
pub fn residual_b(g: &G, scale: f32, hi: &[f32], lo: &[f32], div: &[f32], i: usize, j: usize) -> f32 {
    scale * div[g.c(i, j)] + df_differences(g, hi, lo, i, j)
}

/// [`residual_b`] along row `j` into `out`, through [`df_row`] (the same bits, tested).
#[inline(always)]
pub fn residual_b_row(g: &G, scale: f32, hi: &[f32], lo: &[f32], div: &[f32], j: usize, out: &mut [f32]) {
    df_row(
        g,
        (hi, lo, div),
        j,
        out,
        #[inline(always)]
        |d, sum| scale * d + sum,
    );
}

/// Fill level 0's `b` (and `p` in copy mode; they are adjacent in the packed buffer).
pub fn run(
    g: &G,
    params: &MgParams,
    dt: f32,
    pressure: &mut [f32],
    pressure_lo: &mut [f32],
    div: &[f32],
    mg: &mut [f32],
) {
    let n = (params.nx * params.ny) as usize;
    let scale = -g.h * g.h / dt;
    let (b, p) = mg[params.b as usize..params.b as usize + 2 * n].split_at_mut(n);
    let cold = params.zero_initial != 0;
    if params.colour == LOAD_RESIDUAL {
        let (hi, lo) = (&*pressure, &*pressure_lo);
        for_each_row(
            b,
            g.nx,
            #[inline(always)]
            |j, row| {
                if cold {
                    for (i, x) in row.iter_mut().enumerate() {
                        *x = scale * div[g.c(i, j)];
                    }
                } else {
                    residual_b_row(g, scale, hi, lo, div, j, row);
                }
            },
        );
        if cold {
            pressure.fill(0.0);
            pressure_lo.fill(0.0);
        }
        return;
    }
    b.par_iter_mut().zip(div).for_each(|(x, d)| *x = scale * d);
    if cold {
        p.fill(0.0);
    } else {
        p.copy_from_slice(pressure);
    }
}

/// The table's entry: a dispatch of `mg_load` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: MgParams = d.params().unwrap_or_default();
    if c.g.solids && p.colour == LOAD_RESIDUAL && p.zero_initial == 0 {
        let (faces, div) = ((s.r("u_faces"), s.r("v_faces")), s.r("divergence"));
        let (hi, lo, mg) = (s.w("pressure"), s.w("pressure_lo"), s.w("mg"));
        let n = (p.nx * p.ny) as usize;
        let scale = -c.g.h * c.g.h / c.dt;
        let b = &mut mg[p.b as usize..p.b as usize + n];
        return super::solid::mg_load_residual(c.g, scale, (hi, lo, div), faces, b);
    }
    run(c.g, &p, c.dt, s.w("pressure"), s.w("pressure_lo"), s.r("divergence"), s.w("mg"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::{Boundary, Grid};

    #[test]
    fn residual_rows_equal_the_cell_function() {
        for (nx, ny, bd) in [(13u32, 9u32, Boundary::Wall), (12, 11, Boundary::Periodic), (3, 4, Boundary::Wall)] {
            let grid = Grid::new(nx, ny, 0.1, bd, bd).expect("grid");
            let g = G::new(&grid.uniform());
            let n = (nx * ny) as usize;
            let mut rng = swirly_core::scene::SplitMix64(8);
            let mut rand = |scale: f32| -> Vec<f32> { (0..n).map(|_| scale * (2.0 * rng.next_f32() - 1.0)).collect() };
            let (hi, lo, div) = (rand(100.0), rand(1e-5), rand(1.0));
            let mut row = vec![0.0; nx as usize];
            for j in 0..ny as usize {
                residual_b_row(&g, -0.3, &hi, &lo, &div, j, &mut row);
                for (i, x) in row.iter().enumerate() {
                    let want = residual_b(&g, -0.3, &hi, &lo, &div, i, j);
                    assert_eq!(x.to_bits(), want.to_bits(), "({i}, {j}) {bd:?}");
                }
            }
        }
    }
}
