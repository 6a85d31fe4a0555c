//! `sor`: one colour pass of red-black successive over-relaxation of the pressure Poisson
//! equation (the system of [`super::jacobi`]). A cell is red when `i + j` is even, black
//! otherwise; a pass relaxes the cells of its colour, `p ← p + ω ((Σ p_nbr + b) / n_c − p)`, and
//! copies the others. Because every neighbour of a red cell is black (and vice versa, except
//! across the seam of a periodic axis of odd length, where those neighbours keep last pass's
//! value), one red pass and one black pass are one Gauss–Seidel iteration. The pass reads one
//! buffer and writes another, so it is race-free and identical on every backend.

use swirly_core::grid::uniforms::JacobiParams;

use super::common::{Cross, G, cross, for_each_row, inner};
use super::jacobi::{cold_start_cell, jacobi_cell, jacobi_interior};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// New pressure at cell `(i, j)` for the pass of colour `params.colour`.
#[inline(always)]
pub fn sor_cell(g: &G, params: &JacobiParams, scale: f32, p: &[f32], div: &[f32], i: usize, j: usize) -> f32 {
    let c = g.c(i, j);
    let mine = ((i + j) & 1) as u32 == params.colour;
    if params.zero_initial != 0 {
        return if mine { cold_start_cell(g, params.omega, scale, div, i, j) } else { 0.0 };
    }
    if mine { jacobi_cell(g, params.omega, scale, p, div, i, j) } else { p[c] }
}

/// One colour pass from `p` into `out`. Rows with rows above and below take their inner cells
/// over row slices (the Jacobi value of every cell, then the colour's select), so that they
/// vectorise; the same bits as [`sor_cell`] (tested).
pub fn run(g: &G, params: &JacobiParams, dt: f32, p: &[f32], div: &[f32], out: &mut [f32]) {
    let scale = -g.h * g.h / dt;
    let nx = g.nx;
    for_each_row(
        out,
        nx,
        #[inline(always)]
        |j, row| {
            if params.zero_initial != 0 || j == 0 || j + 1 >= g.ny || nx < 3 {
                for (i, x) in row.iter_mut().enumerate() {
                    *x = sor_cell(g, params, scale, p, div, i, j);
                }
                return;
            }
            row[0] = sor_cell(g, params, scale, p, div, 0, j);
            row[nx - 1] = sor_cell(g, params, scale, p, div, nx - 1, j);
            let Cross { centre, left, right, down, up } = cross(p, nx, j);
            let d = inner(div, nx, j);
            // Inner cell k is cell i = k + 1, of colour (i + j) mod 2.
            let first = ((1 + j) & 1) as u32;
            for (k, x) in row[1..nx - 1].iter_mut().enumerate() {
                let relaxed =
                    jacobi_interior(params.omega, scale, centre[k], left[k] + right[k] + down[k] + up[k], d[k]);
                let mine = (first ^ (k as u32 & 1)) == params.colour;
                *x = if mine { relaxed } else { centre[k] };
            }
        },
    );
}

/// The table's entry: a dispatch of `sor` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: JacobiParams = d.params().unwrap_or_default();
    if c.g.solids {
        let colour = Some(p.colour);
        return super::solid::sweep(
            c.g,
            &p,
            c.dt,
            (s.r("pressure"), s.r("divergence")),
            (s.r("u_faces"), s.r("v_faces")),
            colour,
            s.w("pressure_out"),
        );
    }
    run(c.g, &p, c.dt, s.r("pressure"), s.r("divergence"), s.w("pressure_out"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::{Boundary, Grid};

    #[test]
    fn rows_equal_the_one_cell_function() {
        for (b, nx, ny) in
            [(Boundary::Wall, 29, 9), (Boundary::Periodic, 29, 9), (Boundary::Periodic, 7, 5), (Boundary::Wall, 2, 5)]
        {
            let grid = Grid::new(nx, ny, 0.1, b, b).expect("grid");
            let g = G::new(&grid.uniform());
            let n = (nx * ny) as usize;
            let mut rng = swirly_core::scene::SplitMix64(19);
            let mut rand = |len: usize| -> Vec<f32> { (0..len).map(|_| 4.0 * rng.next_f32() - 2.0).collect() };
            let (p, div) = (rand(n), rand(n));
            for (colour, zero_initial) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let params = JacobiParams { omega: 1.7, colour, zero_initial, ..JacobiParams::default() };
                let mut out = vec![0.0; n];
                run(&g, &params, 0.03, &p, &div, &mut out);
                let scale = -g.h * g.h / 0.03;
                for j in 0..ny as usize {
                    for i in 0..nx as usize {
                        let want = sor_cell(&g, &params, scale, &p, &div, i, j);
                        assert_eq!(out[g.c(i, j)].to_bits(), want.to_bits(), "({i}, {j}) {b:?} colour {colour}");
                    }
                }
            }
        }
    }
}
