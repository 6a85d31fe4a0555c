//! `apply_forces`: one invocation updates one u-face and one v-face with gravity, Boussinesq
//! buoyancy (averaged from the two cells beside a v-face) and vorticity confinement
//! `ε·h·(N × ω)` (averaged from the two cells beside a face). The max-speed limit is
//! `clamp_speed`'s.

use swirly_core::grid::uniforms::ForceParams;

use rayon::prelude::*;

use super::common::{Cross, G, cross, for_each_row, next, prev};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// |ω| gradient direction N and the confinement force `ε h (N_y ω, −N_x ω)` at cell `(i, j)`.
#[inline(always)]
pub fn confinement(g: &G, p: &ForceParams, curl: &[f32], i: usize, j: usize) -> (f32, f32) {
    let (il, ir) = (prev(i, g.nx, g.px).unwrap_or(i), next(i, g.nx, g.px).unwrap_or(i));
    let (jd, ju) = (prev(j, g.ny, g.py).unwrap_or(j), next(j, g.ny, g.py).unwrap_or(j));
    let sx = if g.px { 2.0 } else { (ir - il) as f32 };
    let sy = if g.py { 2.0 } else { (ju - jd) as f32 };
    confinement_from(g, p, curl, (i, j), [il, ir, jd, ju], [sx, sy])
}

/// The confinement force at cell `(i, j)` from the |ω| differences between its neighbours
/// `[left, right, down, up]`, `spacing` cells apart along x and y (0: no difference).
#[inline(always)]
fn confinement_from(
    g: &G,
    p: &ForceParams,
    curl: &[f32],
    (i, j): (usize, usize),
    [il, ir, jd, ju]: [usize; 4],
    [sx, sy]: [f32; 2],
) -> (f32, f32) {
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

/// [`confinement`] with solids (`solid`: each cell's solid fraction): none in a cell wholly
/// inside a solid, and a neighbour wholly inside one taken as a wall (one-sided difference),
/// so that a solid's own rotation does not steer the fluid's.
#[inline(always)]
pub fn confinement_round_solids(g: &G, p: &ForceParams, curl: &[f32], solid: &[f32], i: usize, j: usize) -> (f32, f32) {
    let fluid = |i: usize, j: usize| solid[g.c(i, j)] < 1.0;
    if !fluid(i, j) {
        return (0.0, 0.0);
    }
    let or_self = |k: Option<usize>, s: usize, open: &dyn Fn(usize) -> bool| k.filter(|&k| open(k)).unwrap_or(s);
    let (il, ir) =
        (or_self(prev(i, g.nx, g.px), i, &|k| fluid(k, j)), or_self(next(i, g.nx, g.px), i, &|k| fluid(k, j)));
    let (jd, ju) =
        (or_self(prev(j, g.ny, g.py), j, &|k| fluid(i, k)), or_self(next(j, g.ny, g.py), j, &|k| fluid(i, k)));
    let sx = f32::from(u8::from(il != i)) + f32::from(u8::from(ir != i));
    let sy = f32::from(u8::from(jd != j)) + f32::from(u8::from(ju != j));
    confinement_from(g, p, curl, (i, j), [il, ir, jd, ju], [sx, sy])
}

/// Upward buoyant acceleration of cell `(i, j)`.
#[inline(always)]
pub fn buoyancy(p: &ForceParams, density: f32, temperature: f32) -> f32 {
    -p.density_weight * density + p.temperature_lift * (temperature - p.ambient_temperature)
}

/// New u at face `(i, j)` given its old value, with `conf(i, j)` the confinement force of cell
/// `(i, j)` (computed on the spot or looked up).
#[inline(always)]
fn force_u_face_with(
    g: &G,
    p: &ForceParams,
    dt: f32,
    conf: impl Fn(usize, usize) -> (f32, f32),
    u: f32,
    i: usize,
    j: usize,
) -> f32 {
    if g.u_on_wall(i) {
        return g.wall_u(i, j);
    }
    let i = g.ui(i);
    let mut a = p.gravity[0];
    if p.vorticity != 0.0 {
        let left = prev(i, g.nx, g.px).unwrap_or(i);
        let right = if i < g.nx { i } else { left };
        a += 0.5 * (conf(left, j).0 + conf(right, j).0);
    }
    u + dt * a
}

/// New u at face `(i, j)` given its old value.
#[inline(always)]
#[cfg_attr(not(test), expect(dead_code, reason = "the reference its row kernel is tested against"))]
pub fn force_u_face(g: &G, p: &ForceParams, dt: f32, curl: &[f32], u: f32, i: usize, j: usize) -> f32 {
    force_u_face_with(g, p, dt, |i, j| confinement(g, p, curl, i, j), u, i, j)
}

/// New v at face `(i, j)` given its old value, with `conf(i, j)` the confinement force of cell
/// `(i, j)`.
#[inline(always)]
fn force_v_face_with(
    g: &G,
    p: &ForceParams,
    dt: f32,
    density: &[f32],
    temperature: &[f32],
    conf: impl Fn(usize, usize) -> (f32, f32),
    v: f32,
    i: usize,
    j: usize,
) -> f32 {
    if g.v_on_wall(j) {
        return g.wall_v(i, j);
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
        a += 0.5 * (conf(i, down).1 + conf(i, up).1);
    }
    v + dt * a
}

/// New v at face `(i, j)` given its old value.
#[inline(always)]
#[cfg_attr(not(test), expect(dead_code, reason = "the reference its row kernel is tested against"))]
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
    force_v_face_with(g, p, dt, density, temperature, |i, j| confinement(g, p, curl, i, j), v, i, j)
}

/// [`confinement`] of the inner cells `1..nx − 1` of row `j` (which has rows above and below)
/// into `fx`, `fy` (index `i − 1`): the same arithmetic with spacing 2 on both axes and the
/// zero force for a vanishing gradient as a select, so that it vectorises.
#[inline(always)]
fn confinement_row(g: &G, p: &ForceParams, curl: &[f32], j: usize, fx: &mut [f32], fy: &mut [f32]) {
    let nx = g.nx;
    let Cross { centre, left, right, down, up } = cross(curl, nx, j);
    let (sx, sy) = (2.0f32, 2.0f32);
    // The parameters' products as locals, the same operations as in [`confinement`]: read
    // through `p` and `g` inside the loop, LLVM reloaded them after every store to `fx` and
    // `fy` (it could not rule out aliasing) and left the loop scalar.
    let (dx, dy) = (sx * g.h, sy * g.h);
    let (kx, ky) = (p.vorticity * g.h, -p.vorticity * g.h);
    // Zipped slices, not indices (bounds checks keep an indexed loop scalar).
    let cells = fx[..nx - 2].iter_mut().zip(&mut fy[..nx - 2]).zip(centre).zip(left).zip(right).zip(down).zip(up);
    for ((((((rx, ry), &w), l), r), d), u) in cells {
        let gx = (r.abs() - l.abs()) / dx;
        let gy = (u.abs() - d.abs()) / dy;
        let len = (gx * gx + gy * gy).sqrt();
        let (nx, ny) = (gx / len, gy / len);
        let tiny = len <= 1e-20;
        *rx = if tiny { 0.0 } else { kx * ny * w };
        *ry = if tiny { 0.0 } else { ky * nx * w };
    }
}

/// Update `u` and `v` in place. Each face averages the confinement force of the two cells
/// beside it, so every cell's force is computed once first (one pass, two scratch fields)
/// instead of once per face that uses it; the faces then run [`force_u_face`] /
/// [`force_v_face`]'s arithmetic on those values. Inner cells and faces (no wall, no seam
/// involved) take paths over row slices that vectorise; everything is the same bit for bit
/// (tested). `scratch` holds the forces; it is grown to two fields of cells when shorter (keep
/// it between calls to avoid allocating).
pub fn run<'a>(
    g: &G,
    p: &ForceParams,
    dt: f32,
    u: &mut [f32],
    v: &mut [f32],
    density: &'a [f32],
    temperature: &'a [f32],
    curl: &[f32],
    solid: &[f32],
    scratch: &mut Vec<f32>,
) {
    let (nx, ny) = (g.nx, g.ny);
    let cells = nx * ny;
    if scratch.len() < 2 * cells {
        scratch.resize(2 * cells, 0.0);
    }
    // Without confinement the forces are never read.
    let (fx, fy) = scratch[..2 * cells].split_at_mut(cells);
    if p.vorticity != 0.0 {
        let arch = crate::simd::arch();
        fx.par_chunks_mut(nx).zip(fy.par_chunks_mut(nx)).enumerate().for_each(|(j, (rx, ry))| {
            crate::simd::vectorized(
                arch,
                #[inline(always)]
                || {
                    if g.solids {
                        for i in 0..nx {
                            (rx[i], ry[i]) = confinement_round_solids(g, p, curl, solid, i, j);
                        }
                        return;
                    }
                    if nx < 3 || j == 0 || j + 1 >= ny {
                        for i in 0..nx {
                            (rx[i], ry[i]) = confinement(g, p, curl, i, j);
                        }
                        return;
                    }
                    (rx[0], ry[0]) = confinement(g, p, curl, 0, j);
                    (rx[nx - 1], ry[nx - 1]) = confinement(g, p, curl, nx - 1, j);
                    confinement_row(g, p, curl, j, &mut rx[1..nx - 1], &mut ry[1..nx - 1]);
                },
            )
        });
    }
    let (fx, fy) = (&*fx, &*fy);
    let conf = |i: usize, j: usize| (fx[g.c(i, j)], fy[g.c(i, j)]);
    for_each_row(
        u,
        nx + 1,
        #[inline(always)]
        |j, row| {
            if nx < 2 {
                for (i, x) in row.iter_mut().enumerate() {
                    *x = force_u_face_with(g, p, dt, conf, *x, i, j);
                }
                return;
            }
            row[0] = force_u_face_with(g, p, dt, conf, row[0], 0, j);
            row[nx] = force_u_face_with(g, p, dt, conf, row[nx], nx, j);
            // Inner face i = k + 1 lies between cells k and k + 1 of the row. The parameters
            // as a local copy: read through the shared reference, LLVM reloaded them after every
            // store to the row (it could not rule out aliasing) and left the loop scalar.
            let params = *p;
            let p = &params;
            let f = &fx[j * nx..][..nx];
            for ((x, fl), fr) in row[1..nx].iter_mut().zip(&f[..nx - 1]).zip(&f[1..]) {
                let mut a = p.gravity[0];
                if p.vorticity != 0.0 {
                    a += 0.5 * (fl + fr);
                }
                *x += dt * a;
            }
        },
    );
    let buoyant = p.density_weight != 0.0 || p.temperature_lift != 0.0;
    let zeros = if buoyant { Vec::new() } else { vec![0.0f32; nx] };
    for_each_row(
        v,
        nx,
        #[inline(always)]
        |j, row| {
            if j == 0 || j >= ny {
                for (i, x) in row.iter_mut().enumerate() {
                    *x = force_v_face_with(g, p, dt, density, temperature, conf, *x, i, j);
                }
                return;
            }
            // Face row j lies between cell rows j − 1 and j. The parameters as a local copy (see
            // the u rows).
            let params = *p;
            let p = &params;
            let (cd, cu) = ((j - 1) * nx, j * nx);
            // Without buoyancy the cell fields are not read (a scene may carry none).
            let rows = |f: &'a [f32]| if buoyant { (&f[cd..][..nx], &f[cu..][..nx]) } else { (&zeros[..], &zeros[..]) };
            let ((dd, du), (td, tu)) = (rows(density), rows(temperature));
            let (fd, fu) = (&fy[cd..][..nx], &fy[cu..][..nx]);
            let faces = row.iter_mut().zip(dd).zip(du).zip(td).zip(tu).zip(fd).zip(fu);
            for ((((((x, &dd), &du), &td), &tu), fd), fu) in faces {
                let mut a = p.gravity[1];
                if buoyant {
                    a += 0.5 * (buoyancy(p, dd, td) + buoyancy(p, du, tu));
                }
                if p.vorticity != 0.0 {
                    a += 0.5 * (fd + fu);
                }
                *x += dt * a;
            }
        },
    );
}

/// The table's entry: a dispatch of `apply_forces` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: ForceParams = d.params().unwrap_or_default();
    // A cell field the scene does not carry is empty; buoyancy reads it as the zeros it held.
    let zeros;
    let (mut density, mut temperature) = (s.r("density"), s.r("temperature"));
    let buoyant = p.density_weight != 0.0 || p.temperature_lift != 0.0;
    if buoyant && (density.is_empty() || temperature.is_empty()) {
        zeros = vec![0.0; c.g.nx * c.g.ny];
        if density.is_empty() {
            density = &zeros;
        }
        if temperature.is_empty() {
            temperature = &zeros;
        }
    }
    let (u, v) = (s.w("u"), s.w("v"));
    run(c.g, &p, c.dt, u, v, density, temperature, s.r("curl"), s.r("solid"), c.scratch);
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::{Boundary, FieldId, Grid};

    #[test]
    fn batched_faces_equal_the_one_face_functions() {
        for b in [Boundary::Wall, Boundary::Periodic] {
            let grid = Grid::new(17, 11, 0.1, b, b).expect("grid");
            // A calm patch (cells 2..6 of rows 2..6): the gradient of |ω| vanishes there.
            let g = G::new(&grid.uniform());
            let mut rng = swirly_core::scene::SplitMix64(21);
            let mut rand = |n: usize| -> Vec<f32> { (0..n).map(|_| 4.0 * rng.next_f32() - 2.0).collect() };
            let (u0, v0) = (rand(grid.len(FieldId::U)), rand(grid.len(FieldId::V)));
            let (den, tem, mut curl) = (rand(17 * 11), rand(17 * 11), rand(17 * 11));
            for j in 2..6 {
                for i in 2..6 {
                    curl[g.c(i, j)] = if (i + j) % 2 == 0 { 0.25 } else { -0.25 };
                }
            }
            for (vorticity, density_weight, temperature_lift) in [(0.0, 0.4, 0.9), (0.7, 0.4, 0.9), (0.7, 0.0, 0.0)] {
                let p = ForceParams {
                    gravity: [0.1, -0.3],
                    density_weight,
                    temperature_lift,
                    ambient_temperature: 0.2,
                    vorticity,
                    max_speed: 1.5,
                    clamp_speed: 1,
                };
                let (mut u, mut v) = (u0.clone(), v0.clone());
                run(&g, &p, 0.05, &mut u, &mut v, &den, &tem, &curl, &[], &mut Vec::new());
                for j in 0..11 {
                    for i in 0..=17 {
                        let want = force_u_face(&g, &p, 0.05, &curl, u0[g.u(i, j)], i, j);
                        assert_eq!(u[g.u(i, j)].to_bits(), want.to_bits(), "u ({i}, {j}) {b:?}");
                    }
                }
                for j in 0..=11 {
                    for i in 0..17 {
                        let want = force_v_face(&g, &p, 0.05, &den, &tem, &curl, v0[g.v(i, j)], i, j);
                        assert_eq!(v[g.v(i, j)].to_bits(), want.to_bits(), "v ({i}, {j}) {b:?}");
                    }
                }
            }
        }
    }

    /// Round solids: a cell wholly inside one has no confinement force, a cell with no solid
    /// neighbour has the force it would have without solids, and a neighbour wholly inside a
    /// solid (a fast-turning one: |ω| 50) counts as a wall.
    #[test]
    fn confinement_ignores_solid_cells() {
        let plain_grid = Grid::new(9, 7, 0.1, Boundary::Wall, Boundary::Wall).expect("grid");
        let g = G::new(&Grid { solids: true, ..plain_grid }.uniform());
        let plain = G::new(&plain_grid.uniform());
        let p = ForceParams { vorticity: 0.8, ..ForceParams::default() };
        let mut rng = swirly_core::scene::SplitMix64(4);
        let mut curl: Vec<f32> = (0..63).map(|_| rng.next_f32() - 0.5).collect();
        let mut solid = vec![0.0f32; 63];
        for (i, j) in [(5, 3), (6, 3), (5, 4)] {
            solid[g.c(i, j)] = 1.0;
            curl[g.c(i, j)] = 50.0;
        }
        solid[g.c(2, 2)] = 0.5; // partly solid: still fluid
        assert_eq!(confinement_round_solids(&g, &p, &curl, &solid, 5, 3), (0.0, 0.0));
        for (i, j) in [(1, 1), (2, 2), (3, 3), (7, 5)] {
            assert_eq!(confinement_round_solids(&g, &p, &curl, &solid, i, j), confinement(&plain, &p, &curl, i, j));
        }
        // Cell (4, 3): its right neighbour is solid, so ∂|ω|/∂x is one-sided to its left.
        let at = |i: usize, j: usize| curl[g.c(i, j)].abs();
        let (gx, gy) = ((at(4, 3) - at(3, 3)) / 0.1, (at(4, 4) - at(4, 2)) / 0.2);
        let len = (gx * gx + gy * gy).sqrt();
        let w = curl[g.c(4, 3)];
        let want = (0.8 * 0.1 * (gy / len) * w, -0.8 * 0.1 * (gx / len) * w);
        let got = confinement_round_solids(&g, &p, &curl, &solid, 4, 3);
        assert!((got.0 - want.0).abs() < 1e-6 && (got.1 - want.1).abs() < 1e-6, "{got:?} vs {want:?}");
        // The solid's |ω| of 50 would otherwise dominate the direction.
        assert!((confinement(&plain, &p, &curl, 4, 3).0 - got.0).abs() > 1e-3);
    }
}
