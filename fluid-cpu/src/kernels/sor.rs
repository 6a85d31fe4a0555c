//! `sor`: one colour pass of red-black successive over-relaxation of the pressure Poisson
//! equation (the system of [`super::jacobi`]). A cell is red when `i + j` is even, black
//! otherwise; a pass relaxes the cells of its colour, `p ← p + ω ((Σ p_nbr + b) / n_c − p)`, and
//! copies the others. Because every neighbour of a red cell is black (and vice versa, except
//! across the seam of a periodic axis of odd length, where those neighbours keep last pass's
//! value), one red pass and one black pass are one Gauss–Seidel iteration. The pass reads one
//! buffer and writes another, so it is race-free and identical on every backend.

use fluid_core::uniforms::JacobiParams;

use super::common::{G, for_each_row};
use super::jacobi::{jacobi_cell, neighbour_count};

/// New pressure at cell `(i, j)` for the pass of colour `params.colour`.
#[inline(always)]
pub fn sor_cell(g: &G, params: &JacobiParams, scale: f32, p: &[f32], div: &[f32], i: usize, j: usize) -> f32 {
    let c = g.c(i, j);
    let mine = ((i + j) & 1) as u32 == params.colour;
    if params.zero_initial != 0 {
        // From p = 0: the neighbour sum and the old value vanish.
        let n = neighbour_count(g, i, j);
        return if mine && n != 0.0 { params.omega * scale * div[c] / n } else { 0.0 };
    }
    if mine { jacobi_cell(g, params.omega, scale, p, div, i, j) } else { p[c] }
}

/// One colour pass from `p` into `out`.
pub fn run(g: &G, params: &JacobiParams, dt: f32, p: &[f32], div: &[f32], out: &mut [f32]) {
    let scale = -g.h * g.h / dt;
    for_each_row(
        out,
        g.nx,
        #[inline(always)]
        |j, row| {
            for (i, x) in row.iter_mut().enumerate() {
                *x = sor_cell(g, params, scale, p, div, i, j);
            }
        },
    );
}
