//! `curl`: one invocation computes the vorticity ω = ∂v/∂x − ∂u/∂y of one cell from the
//! cell-centred velocities of its neighbours (central differences; one-sided at walls).

use super::common::{G, for_each_row, next, prev};

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

/// Fill `curl`.
pub fn run(g: &G, u: &[f32], v: &[f32], curl: &mut [f32]) {
    for_each_row(curl, g.nx, |j, row| {
        for (i, w) in row.iter_mut().enumerate() {
            *w = curl_cell(g, u, v, i, j);
        }
    });
}
