//! `jacobi`: one invocation performs one weighted-Jacobi sweep of the pressure Poisson equation
//! `∇²p = ∇·u / dt` at one cell. In matrix form `A p = b` with `(A p)_c = n_c p_c − Σ p_nbr`
//! over the `n_c` neighbours that are not walls (walls are Neumann: `∂p/∂n = 0`) and
//! `b = −h² ∇·u / dt`; the sweep is `p ← p + ω ((Σ p_nbr + b) / n_c − p)`.

use fluid_core::uniforms::JacobiParams;

use super::common::{Cross, G, cross, for_each_row, inner};

/// Sum of the existing neighbours' pressure and their count, for cell `(i, j)`.
#[inline(always)]
pub fn neighbours(g: &G, p: &[f32], i: usize, j: usize) -> (f32, f32) {
    let (nx, ny) = (g.nx, g.ny);
    if i > 0 && i + 1 < nx && j > 0 && j + 1 < ny {
        let c = g.c(i, j);
        return (p[c - 1] + p[c + 1] + p[c - nx] + p[c + nx], 4.0);
    }
    let mut sum = 0.0f32;
    let mut n = 0.0f32;
    if let Some(il) = super::common::prev(i, nx, g.px) {
        sum += p[g.c(il, j)];
        n += 1.0;
    }
    if let Some(ir) = super::common::next(i, nx, g.px) {
        sum += p[g.c(ir, j)];
        n += 1.0;
    }
    if let Some(jd) = super::common::prev(j, ny, g.py) {
        sum += p[g.c(i, jd)];
        n += 1.0;
    }
    if let Some(ju) = super::common::next(j, ny, g.py) {
        sum += p[g.c(i, ju)];
        n += 1.0;
    }
    (sum, n)
}

/// New pressure at cell `(i, j)`. `scale = −h² / dt` turns divergence into `b`.
#[inline(always)]
pub fn jacobi_cell(g: &G, omega: f32, scale: f32, p: &[f32], div: &[f32], i: usize, j: usize) -> f32 {
    let c = g.c(i, j);
    let (sum, n) = neighbours(g, p, i, j);
    if n == 0.0 {
        return p[c];
    }
    let pj = (sum + scale * div[c]) / n;
    p[c] + omega * (pj - p[c])
}

/// One sweep from `p` into `out`.
pub fn run(g: &G, params: &JacobiParams, dt: f32, p: &[f32], div: &[f32], out: &mut [f32]) {
    let scale = -g.h * g.h / dt;
    let omega = params.omega;
    if params.zero_initial != 0 {
        // From p = 0 the neighbour sum vanishes: p ← ω b / n_c.
        for_each_row(
            out,
            g.nx,
            #[inline(always)]
            |j, row| {
                for (i, x) in row.iter_mut().enumerate() {
                    let n = neighbour_count(g, i, j);
                    *x = if n == 0.0 { 0.0 } else { omega * scale * div[g.c(i, j)] / n };
                }
            },
        );
        return;
    }
    let nx = g.nx;
    for_each_row(
        out,
        nx,
        #[inline(always)]
        |j, row| {
            if j == 0 || j + 1 >= g.ny || nx < 3 {
                for (i, x) in row.iter_mut().enumerate() {
                    *x = jacobi_cell(g, omega, scale, p, div, i, j);
                }
                return;
            }
            // Interior row: the edge cells take the general path, the rest the same formula over
            // neighbouring slices (which the compiler vectorises).
            row[0] = jacobi_cell(g, omega, scale, p, div, 0, j);
            row[nx - 1] = jacobi_cell(g, omega, scale, p, div, nx - 1, j);
            let mid = &mut row[1..nx - 1];
            let Cross { centre, left, right, down, up } = cross(p, nx, j);
            let d = inner(div, nx, j);
            for k in 0..mid.len() {
                mid[k] = jacobi_interior(omega, scale, centre[k], left[k] + right[k] + down[k] + up[k], d[k]);
            }
        },
    );
}

/// The sweep at a cell with four neighbours, from values: the same arithmetic as
/// [`jacobi_cell`] there.
#[inline(always)]
pub fn jacobi_interior(omega: f32, scale: f32, p: f32, sum: f32, div: f32) -> f32 {
    let pj = (sum + scale * div) / 4.0;
    p + omega * (pj - p)
}

/// Number of non-wall neighbours of cell `(i, j)`.
#[inline(always)]
pub fn neighbour_count(g: &G, i: usize, j: usize) -> f32 {
    let side = |k: usize, n: usize, periodic: bool| -> f32 {
        if periodic { 2.0 } else { f32::from(u8::from(k > 0)) + f32::from(u8::from(k + 1 < n)) }
    };
    side(i, g.nx, g.px) + side(j, g.ny, g.py)
}
