//! `apply_forces`: one invocation updates one u-face and one v-face with gravity, Boussinesq
//! buoyancy (averaged from the two cells beside a v-face) and vorticity confinement
//! `ε·h·(N × ω)` (averaged from the two cells beside a face), then clamps the components.

use fluid_core::uniforms::ForceParams;

use super::common::{G, for_each_row, next, prev};

/// |ω| gradient direction N and the confinement force `ε h (N_y ω, −N_x ω)` at cell `(i, j)`.
#[inline(always)]
pub fn confinement(g: &G, p: &ForceParams, curl: &[f32], i: usize, j: usize) -> (f32, f32) {
    let (il, ir) = (prev(i, g.nx, g.px).unwrap_or(i), next(i, g.nx, g.px).unwrap_or(i));
    let (jd, ju) = (prev(j, g.ny, g.py).unwrap_or(j), next(j, g.ny, g.py).unwrap_or(j));
    let sx = if g.px { 2.0 } else { (ir - il) as f32 };
    let sy = if g.py { 2.0 } else { (ju - jd) as f32 };
    let w = curl[g.c(i, j)];
    let gx = if sx > 0.0 { (curl[g.c(ir, j)].abs() - curl[g.c(il, j)].abs()) / (sx * g.h) } else { 0.0 };
    let gy = if sy > 0.0 { (curl[g.c(i, ju)].abs() - curl[g.c(i, jd)].abs()) / (sy * g.h) } else { 0.0 };
    let len = (gx * gx + gy * gy).sqrt();
    if len <= 1e-20 {
        return (0.0, 0.0);
    }
    let (nx, ny) = (gx / len, gy / len);
    (p.vorticity * g.h * ny * w, -p.vorticity * g.h * nx * w)
}

/// Upward buoyant acceleration of cell `(i, j)`.
#[inline(always)]
pub fn buoyancy(p: &ForceParams, density: f32, temperature: f32) -> f32 {
    -p.density_weight * density + p.temperature_lift * (temperature - p.ambient_temperature)
}

#[inline(always)]
fn clamp(p: &ForceParams, x: f32) -> f32 {
    if p.clamp_speed != 0 { x.clamp(-p.max_speed, p.max_speed) } else { x }
}

/// New u at face `(i, j)` given its old value.
#[inline(always)]
pub fn force_u_face(g: &G, p: &ForceParams, dt: f32, curl: &[f32], u: f32, i: usize, j: usize) -> f32 {
    if g.u_on_wall(i) {
        return 0.0;
    }
    let i = g.ui(i);
    let mut a = p.gravity[0];
    if p.vorticity != 0.0 {
        let left = prev(i, g.nx, g.px).unwrap_or(i);
        let right = if i < g.nx { i } else { left };
        a += 0.5 * (confinement(g, p, curl, left, j).0 + confinement(g, p, curl, right, j).0);
    }
    clamp(p, u + dt * a)
}

/// New v at face `(i, j)` given its old value.
#[inline(always)]
pub fn force_v_face(
    g: &G,
    p: &ForceParams,
    dt: f32,
    density: &[f32],
    temperature: &[f32],
    curl: &[f32],
    v: f32,
    i: usize,
    j: usize,
) -> f32 {
    if g.v_on_wall(j) {
        return 0.0;
    }
    let j = g.vj(j);
    let down = prev(j, g.ny, g.py).unwrap_or(j);
    let up = if j < g.ny { j } else { down };
    let mut a = p.gravity[1];
    if p.density_weight != 0.0 || p.temperature_lift != 0.0 {
        let (cd, cu) = (g.c(i, down), g.c(i, up));
        a += 0.5 * (buoyancy(p, density[cd], temperature[cd]) + buoyancy(p, density[cu], temperature[cu]));
    }
    if p.vorticity != 0.0 {
        a += 0.5 * (confinement(g, p, curl, i, down).1 + confinement(g, p, curl, i, up).1);
    }
    clamp(p, v + dt * a)
}

/// Update `u` and `v` in place.
pub fn run(
    g: &G,
    p: &ForceParams,
    dt: f32,
    u: &mut [f32],
    v: &mut [f32],
    density: &[f32],
    temperature: &[f32],
    curl: &[f32],
) {
    for_each_row(u, g.nx + 1, |j, row| {
        for (i, x) in row.iter_mut().enumerate() {
            *x = force_u_face(g, p, dt, curl, *x, i, j);
        }
    });
    for_each_row(v, g.nx, |j, row| {
        for (i, x) in row.iter_mut().enumerate() {
            *x = force_v_face(g, p, dt, density, temperature, curl, *x, i, j);
        }
    });
}
