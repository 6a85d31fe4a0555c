//! `curl`: one invocation computes the vorticity ω = ∂v/∂x − ∂u/∂y of one cell from the
//! cell-centred velocities of its neighbours (central differences; one-sided at walls).

use super::common::{G, for_each_row, next, prev};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// Cell-centred u of cell `(i, j)`.
#[inline(always)]
pub fn u_centre(g: &G, u: &[f32], i: usize, j: usize) -> f32 {
    0.5 * (u[g.u(i, j)] + u[g.u(i + 1, j)])
}

/// Cell-centred v of cell `(i, j)`.
#[inline(always)]
pub fn v_centre(g: &G, v: &[f32], i: usize, j: usize) -> f32 {
    0.5 * (v[g.v(i, j)] + v[g.v(i, j + 1)])
}

/// ω at cell `(i, j)`.
#[inline(always)]
pub fn curl_cell(g: &G, u: &[f32], v: &[f32], i: usize, j: usize) -> f32 {
    let (il, ir) = (prev(i, g.nx, g.px).unwrap_or(i), next(i, g.nx, g.px).unwrap_or(i));
    let (jd, ju) = (prev(j, g.ny, g.py).unwrap_or(j), next(j, g.ny, g.py).unwrap_or(j));
    // Spacing in cells between the two samples: 2 inside, 1 at a wall, 2 across a periodic seam.
    let sx = if g.px { 2.0 } else { (ir - il) as f32 };
    let sy = if g.py { 2.0 } else { (ju - jd) as f32 };
    let dvdx = if sx > 0.0 { (v_centre(g, v, ir, j) - v_centre(g, v, il, j)) / (sx * g.h) } else { 0.0 };
    let dudy = if sy > 0.0 { (u_centre(g, u, i, ju) - u_centre(g, u, i, jd)) / (sy * g.h) } else { 0.0 };
    dvdx - dudy
}

/// Fill `curl`. Inner cells (neighbours on all four sides, none across a seam) take a path over
/// slices of the rows they read, with [`curl_cell`]'s arithmetic (spacing 2 on both axes), so
/// that it vectorises; the result is the same bit for bit (tested).
pub fn run(g: &G, u: &[f32], v: &[f32], curl: &mut [f32]) {
    let (nx, ny) = (g.nx, g.ny);
    for_each_row(
        curl,
        nx,
        #[inline(always)]
        |j, row| {
            if nx < 3 || j == 0 || j + 1 >= ny {
                for (i, w) in row.iter_mut().enumerate() {
                    *w = curl_cell(g, u, v, i, j);
                }
                return;
            }
            row[0] = curl_cell(g, u, v, 0, j);
            row[nx - 1] = curl_cell(g, u, v, nx - 1, j);
            // Inner cell k is column k + 1. v-faces of rows j, j + 1 at columns k and k + 2;
            // u-faces of rows j − 1, j + 1 at columns k + 1 and k + 2.
            let (v0, v1) = (&v[g.v(0, j)..][..nx], &v[g.v(0, j + 1)..][..nx]);
            let (ud, uu) = (&u[g.u(0, j - 1)..][..nx + 1], &u[g.u(0, j + 1)..][..nx + 1]);
            let (sx, sy) = (2.0f32, 2.0f32);
            for (k, w) in row[1..nx - 1].iter_mut().enumerate() {
                let (vl, vr) = (0.5 * (v0[k] + v1[k]), 0.5 * (v0[k + 2] + v1[k + 2]));
                let (udn, uup) = (0.5 * (ud[k + 1] + ud[k + 2]), 0.5 * (uu[k + 1] + uu[k + 2]));
                let dvdx = (vr - vl) / (sx * g.h);
                let dudy = (uup - udn) / (sy * g.h);
                *w = dvdx - dudy;
            }
        },
    );
}

/// The table's entry: a dispatch of `curl` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, _d: &Dispatch, s: &mut Slots<'_>) {
    run(c.g, s.r("u"), s.r("v"), s.w("curl"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::{Boundary, FieldId, Grid};

    #[test]
    fn rows_equal_the_cell_function() {
        for (nx, ny, bx, by) in [
            (13u32, 9u32, Boundary::Wall, Boundary::Wall),
            (12, 11, Boundary::Periodic, Boundary::Periodic),
            (10, 7, Boundary::Periodic, Boundary::Wall),
            (2, 5, Boundary::Wall, Boundary::Wall),
            (3, 3, Boundary::Wall, Boundary::Periodic),
        ] {
            let grid = Grid::new(nx, ny, 0.3, bx, by).expect("grid");
            let g = G::new(&grid.uniform());
            let mut rng = swirly_core::scene::SplitMix64(3);
            let mut field = |f| (0..grid.len(f)).map(|_| 2.0 * rng.next_f32() - 1.0).collect::<Vec<f32>>();
            let (u, v) = (field(FieldId::U), field(FieldId::V));
            let mut curl = vec![0.0; grid.len(FieldId::Curl)];
            run(&g, &u, &v, &mut curl);
            for j in 0..ny as usize {
                for i in 0..nx as usize {
                    let want = curl_cell(&g, &u, &v, i, j);
                    assert_eq!(curl[g.c(i, j)].to_bits(), want.to_bits(), "({i}, {j}) {nx}x{ny} {bx:?}/{by:?}");
                }
            }
        }
    }
}
