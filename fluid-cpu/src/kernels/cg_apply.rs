//! `cg_apply`: `q = A d` on level 0, the unscaled Poisson operator, in difference form:
//! `q = −Σ (d_nbr − d)` over the neighbours that are not walls (left, right, down, up). The
//! differences of a smooth `d` are exact or nearly, so `q` carries no rounding of `d`'s
//! magnitude; the form `n d − Σ d_nbr` would, and CG's recursive residual would drift from the
//! true one by that much (measured: MGPCG stalled near 3e-5 at 256²).

use swirly_core::grid::uniforms::CgParams;

use super::common::{Around, G, Rows, for_each_row, neighbour_sum, split_around};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// `q` at cell `(i, j)`, with `d(k)` the direction at flat index `k`: the reference that
/// [`run`] matches bit for bit (tested).
#[inline(always)]
pub fn apply_cell(g: &G, (nx, ny): (usize, usize), d: impl Fn(usize) -> f32, i: usize, j: usize) -> f32 {
    let dc = d(j * nx + i);
    -neighbour_sum(nx, ny, (g.px, g.py), i, j, |k| d(k) - dc)
}

/// Fill `q`. Rows with rows above and below ([`Rows::cross`]; on a periodic axis, every row)
/// take their inner cells over row slices, in [`apply_cell`]'s order (from zero: left, right,
/// down, up), so that they vectorise; the other cells go through [`apply_cell`].
pub fn run(g: &G, params: &CgParams, mg: &mut [f32]) {
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let (q, read): (&mut [f32], Around<'_>) = split_around(mg, params.q as usize, nx * ny);
    let d = read.slice(params.d as usize, nx * ny).expect("MGPCG's d lies outside q");
    for_each_row(
        q,
        nx,
        #[inline(always)]
        |j, row| {
            let Some(c) = Rows::of(d, nx, ny, g.py, j).cross() else {
                for (i, x) in row.iter_mut().enumerate() {
                    *x = apply_cell(g, (nx, ny), |k| d[k], i, j);
                }
                return;
            };
            for (k, x) in row[1..nx - 1].iter_mut().enumerate() {
                let dc = c.centre[k];
                let sum = 0.0 + (c.left[k] - dc);
                *x = -(((sum + (c.right[k] - dc)) + (c.down[k] - dc)) + (c.up[k] - dc));
            }
            row[0] = apply_cell(g, (nx, ny), |k| d[k], 0, j);
            row[nx - 1] = apply_cell(g, (nx, ny), |k| d[k], nx - 1, j);
        },
    );
}

/// The table's entry: a dispatch of `cg_apply` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: CgParams = d.params().unwrap_or_default();
    if c.g.solids {
        let faces = (s.r("u_faces"), s.r("v_faces"));
        let mg = s.w("mg");
        let n = (p.nx * p.ny) as usize;
        let (dd, q) = (p.d as usize, p.q as usize);
        let d_copy = mg[dd..dd + n].to_vec();
        return super::solid::cg_apply(c.g, &d_copy, faces, &mut mg[q..q + n]);
    }
    run(c.g, &p, s.w("mg"));
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
            let mut rng = swirly_core::scene::SplitMix64(13);
            let mg0: Vec<f32> = (0..3 * n).map(|_| 4.0 * rng.next_f32() - 2.0).collect();
            let params = CgParams { nx, ny, d: n as u32, q: 2 * n as u32, ..CgParams::default() };
            let mut mg = mg0.clone();
            run(&g, &params, &mut mg);
            let d = |k: usize| mg0[n + k];
            for j in 0..ny as usize {
                for i in 0..nx as usize {
                    let want = apply_cell(&g, (nx as usize, ny as usize), d, i, j);
                    assert_eq!(mg[2 * n + j * nx as usize + i].to_bits(), want.to_bits(), "({i}, {j}) {b:?}");
                }
            }
            assert_eq!(&mg[..2 * n], &mg0[..2 * n], "only q is written");
        }
    }
}
