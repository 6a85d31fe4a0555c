//! `divergence`: one invocation computes `∇·u = (u_right − u_left + v_top − v_bottom) / h` of
//! one cell.

use super::common::{G, for_each_row};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// Divergence of cell `(i, j)`.
#[inline(always)]
#[cfg_attr(not(test), expect(dead_code, reason = "the reference its row kernel is tested against"))]
pub fn divergence_cell(g: &G, u: &[f32], v: &[f32], i: usize, j: usize) -> f32 {
    (u[g.u(i + 1, j)] - u[g.u(i, j)] + v[g.v(i, j + 1)] - v[g.v(i, j)]) * g.inv_h
}

/// Fill `out` with the divergence: [`divergence_cell`]'s arithmetic over a row's slices of the
/// faces, so that it vectorises (the same bits, tested).
pub fn run(g: &G, u: &[f32], v: &[f32], out: &mut [f32]) {
    let nx = g.nx;
    for_each_row(
        out,
        nx,
        #[inline(always)]
        |j, row| {
            let ur = &u[g.u(0, j)..][..nx + 1];
            let (ul, ur) = (&ur[..nx], &ur[1..]);
            let (vb, vt) = (&v[g.v(0, j)..][..nx], &v[g.v(0, j + 1)..][..nx]);
            for (i, d) in row.iter_mut().enumerate() {
                *d = (ur[i] - ul[i] + vt[i] - vb[i]) * g.inv_h;
            }
        },
    );
}

/// The table's entry: a dispatch of `divergence` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, _d: &Dispatch, s: &mut Slots<'_>) {
    if c.g.solids {
        return super::solid::divergence(
            c.g,
            (s.r("u"), s.r("v")),
            (s.r("u_faces"), s.r("v_faces")),
            s.w("divergence"),
        );
    }
    run(c.g, s.r("u"), s.r("v"), s.w("divergence"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::{Boundary, FieldId, Grid};

    #[test]
    fn rows_equal_the_one_cell_function() {
        for (bx, by, nx, ny) in [
            (Boundary::Wall, Boundary::Wall, 29, 9),
            (Boundary::Periodic, Boundary::Periodic, 29, 9),
            (Boundary::Wall, Boundary::Wall, 1, 1),
        ] {
            let grid = Grid::new(nx, ny, 0.1, bx, by).expect("grid");
            let g = G::new(&grid.uniform());
            let mut rng = swirly_core::scene::SplitMix64(5);
            let mut field = |id| (0..grid.len(id)).map(|_| 4.0 * rng.next_f32() - 2.0).collect::<Vec<f32>>();
            let (u, v) = (field(FieldId::U), field(FieldId::V));
            let mut out = vec![0.0; grid.len(FieldId::Divergence)];
            run(&g, &u, &v, &mut out);
            for j in 0..ny as usize {
                for i in 0..nx as usize {
                    assert_eq!(out[g.c(i, j)].to_bits(), divergence_cell(&g, &u, &v, i, j).to_bits(), "({i}, {j})");
                }
            }
        }
    }
}
