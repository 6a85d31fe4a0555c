//! `diffuse_velocity`: one invocation performs one Jacobi sweep of implicit viscosity
//! `(I − ν dt ∇²) u = u₀` for one u-face and one v-face:
//! `u ← (u₀ + a Σ u_nbr) / (1 + a·n)`, `a = ν dt / h²`, over the `n` neighbours that exist.
//! Wall-normal faces stay zero; along a wall the tangential velocity is free-slip (the missing
//! neighbour mirrors the face itself, so it drops out of both sums).

use fluid_core::uniforms::DiffuseParams;

use super::common::{G, for_each_row, next, prev};

/// One sweep at u-face `(i, j)`.
#[inline(always)]
pub fn diffuse_u_face(g: &G, a: f32, u0: &[f32], u: &[f32], i: usize, j: usize) -> f32 {
    if g.u_on_wall(i) {
        return 0.0;
    }
    let i = g.ui(i);
    let (mut sum, mut n) = (0.0f32, 0.0f32);
    // x-neighbours are faces; on a periodic axis face 0's left neighbour is face nx − 1.
    let il = if i > 0 { i - 1 } else { g.nx - 1 };
    sum += u[g.u(il, j)] + u[g.u(i + 1, j)];
    n += 2.0;
    for jj in [prev(j, g.ny, g.py), next(j, g.ny, g.py)].into_iter().flatten() {
        sum += u[g.u(i, jj)];
        n += 1.0;
    }
    (u0[g.u(i, j)] + a * sum) / (1.0 + a * n)
}

/// One sweep at v-face `(i, j)`.
#[inline(always)]
pub fn diffuse_v_face(g: &G, a: f32, v0: &[f32], v: &[f32], i: usize, j: usize) -> f32 {
    if g.v_on_wall(j) {
        return 0.0;
    }
    let j = g.vj(j);
    let (mut sum, mut n) = (0.0f32, 0.0f32);
    let jd = if j > 0 { j - 1 } else { g.ny - 1 };
    sum += v[g.v(i, jd)] + v[g.v(i, j + 1)];
    n += 2.0;
    for ii in [prev(i, g.nx, g.px), next(i, g.nx, g.px)].into_iter().flatten() {
        sum += v[g.v(ii, j)];
        n += 1.0;
    }
    (v0[g.v(i, j)] + a * sum) / (1.0 + a * n)
}

/// One sweep of both components.
pub fn run(
    g: &G,
    p: &DiffuseParams,
    dt: f32,
    u0: &[f32],
    v0: &[f32],
    u: &[f32],
    v: &[f32],
    u_out: &mut [f32],
    v_out: &mut [f32],
) {
    let a = p.viscosity * dt * g.inv_h * g.inv_h;
    for_each_row(u_out, g.nx + 1, |j, row| {
        for (i, x) in row.iter_mut().enumerate() {
            *x = diffuse_u_face(g, a, u0, u, i, j);
        }
    });
    for_each_row(v_out, g.nx, |j, row| {
        for (i, x) in row.iter_mut().enumerate() {
            *x = diffuse_v_face(g, a, v0, v, i, j);
        }
    });
}
