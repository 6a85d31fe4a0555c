//! `cg_init`: the start of MGPCG: `x` = the previous double-float pressure (or zero) and the
//! residual `r = b − A x` with `b = −h² ∇·u / dt`, `A` applied in difference form, into the
//! packed multigrid buffer.

use swirly_core::grid::uniforms::CgParams;

use rayon::prelude::*;

use super::common::{G, Rows, df_differences};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// `(x_hi, x_lo, r)` at cell `(i, j)`.
#[inline(always)]
pub fn cg_init_cell(
    g: &G,
    params: &CgParams,
    scale: f32,
    hi: &[f32],
    lo: &[f32],
    div: &[f32],
    i: usize,
    j: usize,
) -> (f32, f32, f32) {
    let c = g.c(i, j);
    let b = scale * div[c];
    if params.flag != 0 {
        return (0.0, 0.0, b);
    }
    (hi[c], lo[c], b + df_differences(g, hi, lo, i, j))
}

/// Fill `x` (both parts) and `r`, rows in parallel. Rows with rows above and below
/// ([`Rows::cross`]; on a periodic axis, every row) take their inner cells over row slices, in
/// [`cg_init_cell`]'s order (each neighbour's high and low differences, summed from zero: left,
/// right, down, up), so that they vectorise; the same bits as [`cg_init_cell`] (tested).
pub fn run(g: &G, params: &CgParams, dt: f32, pressure: &[f32], pressure_lo: &[f32], div: &[f32], mg: &mut [f32]) {
    let scale = -g.h * g.h / dt;
    let (nx, ny, n) = (g.nx, g.ny, g.nx * g.ny);
    let at = |o: usize| o..o + n;
    let (xo, ro) = (params.x as usize, params.r as usize);
    let [x_hi, x_lo, r] = mg
        .get_disjoint_mut([at(xo), at(xo + n), at(ro)])
        .expect("MGPCG's x (high and low part) and r are disjoint arrays of the packed buffer");
    let arch = crate::simd::arch();
    x_hi.par_chunks_mut(nx)
        .zip(x_lo.par_chunks_mut(nx))
        .zip(r.par_chunks_mut(nx))
        .with_min_len((4096 / nx).max(1))
        .enumerate()
        .for_each(|(j, ((xh, xl), rr))| {
            crate::simd::vectorized(
                arch,
                #[inline(always)]
                || {
                    let row = j * nx;
                    let rows = |f| Rows::of(f, nx, ny, g.py, j).cross();
                    let (Some(h), Some(l), 0) = (rows(pressure), rows(pressure_lo), params.flag) else {
                        for i in 0..nx {
                            (xh[i], xl[i], rr[i]) = cg_init_cell(g, params, scale, pressure, pressure_lo, div, i, j);
                        }
                        return;
                    };
                    xh.copy_from_slice(&pressure[row..row + nx]);
                    xl.copy_from_slice(&pressure_lo[row..row + nx]);
                    let b = &div[row + 1..row + nx - 1];
                    for (k, out) in rr[1..nx - 1].iter_mut().enumerate() {
                        let (hc, lc) = (h.centre[k], l.centre[k]);
                        let sum = 0.0 + ((h.left[k] - hc) + (l.left[k] - lc));
                        let sum = sum + ((h.right[k] - hc) + (l.right[k] - lc));
                        let sum = sum + ((h.down[k] - hc) + (l.down[k] - lc));
                        let sum = sum + ((h.up[k] - hc) + (l.up[k] - lc));
                        *out = scale * b[k] + sum;
                    }
                    for i in [0, nx - 1] {
                        (xh[i], xl[i], rr[i]) = cg_init_cell(g, params, scale, pressure, pressure_lo, div, i, j);
                    }
                },
            )
        });
}

/// The table's entry: a dispatch of `cg_init` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: CgParams = d.params().unwrap_or_default();
    let mg = s.w("mg");
    run(c.g, &p, c.dt, s.r("pressure"), s.r("pressure_lo"), s.r("divergence"), &mut *mg);
    if c.g.solids && p.flag == 0 {
        // The residual again over the weighted stencil (x was copied above).
        let (fields, faces) =
            ((s.r("pressure"), s.r("pressure_lo"), s.r("divergence")), (s.r("u_faces"), s.r("v_faces")));
        let n = (p.nx * p.ny) as usize;
        let scale = -c.g.h * c.g.h / c.dt;
        super::solid::mg_load_residual(c.g, scale, fields, faces, &mut mg[p.r as usize..p.r as usize + n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::{Boundary, Grid};

    #[test]
    fn rows_equal_the_one_cell_function() {
        for (b, nx, ny) in
            [(Boundary::Wall, 29, 9), (Boundary::Periodic, 29, 9), (Boundary::Wall, 2, 5), (Boundary::Wall, 7, 1)]
        {
            let grid = Grid::new(nx, ny, 0.1, b, b).expect("grid");
            let g = G::new(&grid.uniform());
            let n = (nx * ny) as usize;
            let mut rng = swirly_core::scene::SplitMix64(17);
            let mut rand = |len: usize| -> Vec<f32> { (0..len).map(|_| 4.0 * rng.next_f32() - 2.0).collect() };
            let (hi, div) = (rand(n), rand(n));
            let lo: Vec<f32> = hi.iter().map(|x| x * 3e-8).collect();
            // r before x, and x before r.
            for (x, r, flag) in [(n as u32, 0, 0), (0, 2 * n as u32, 0), (0, 2 * n as u32, 1)] {
                let params = CgParams { nx, ny, x, r, flag, ..CgParams::default() };
                let mut mg = vec![9.0; 3 * n + 5];
                run(&g, &params, 0.03, &hi, &lo, &div, &mut mg);
                let scale = -g.h * g.h / 0.03;
                for j in 0..ny as usize {
                    for i in 0..nx as usize {
                        let c = j * nx as usize + i;
                        let (wh, wl, wr) = cg_init_cell(&g, &params, scale, &hi, &lo, &div, i, j);
                        let got = (mg[x as usize + c], mg[x as usize + n + c], mg[r as usize + c]);
                        assert_eq!(
                            (got.0.to_bits(), got.1.to_bits(), got.2.to_bits()),
                            (wh.to_bits(), wl.to_bits(), wr.to_bits()),
                            "({i}, {j}) {b:?} flag {flag}"
                        );
                    }
                }
                assert!(mg[3 * n..].iter().all(|v| *v == 9.0), "nothing past the arrays");
            }
        }
    }
}
