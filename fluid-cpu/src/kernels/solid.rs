//! The paths of the face kernels when obstacles cut the grid ([`G::solids`]): each face
//! weighted by its open fraction, a closed face carrying the solid's velocity (twin of
//! `fluid-shaders/shaders/shared/solid.wgsl` and the branches of the kernels that include it).
//! `uf` and `vf` are the `u_faces` and `v_faces` fields: per face its open fraction and the
//! solid's velocity, interleaved. Plain per-sample code over parallel rows: these paths run only
//! in scenes with obstacles, where the weights' reads dominate anyway.

use swirly_core::grid::uniforms::JacobiParams;

use super::common::{BOTTOM, G, LEFT, RIGHT, TOP, flush_subnormal, for_each_row, next, prev, split_around};
use rayon::prelude::*;

/// Open fraction of x-face `(i, j)`.
#[inline(always)]
pub fn u_open(g: &G, uf: &[f32], i: usize, j: usize) -> f32 {
    uf[2 * g.u(i, j)]
}

/// Open fraction of y-face `(i, j)`.
#[inline(always)]
pub fn v_open(g: &G, vf: &[f32], i: usize, j: usize) -> f32 {
    vf[2 * g.v(i, j)]
}

/// What crosses x-face `(i, j)` whose fluid velocity is `vel`: the open part carries it, the
/// closed part the solid's velocity; a wall face its given velocity (zero, or an inflow's), an
/// open side's edge face the fluid's.
#[inline(always)]
fn u_flux(g: &G, uf: &[f32], vel: f32, i: usize, j: usize) -> f32 {
    if g.u_on_wall(i) {
        return g.wall_u(i, j);
    }
    if g.u_on_edge(i) {
        return vel;
    }
    let (f, s) = (uf[2 * g.u(i, j)], uf[2 * g.u(i, j) + 1]);
    f * vel + (1.0 - f) * s
}

#[inline(always)]
fn v_flux(g: &G, vf: &[f32], vel: f32, i: usize, j: usize) -> f32 {
    if g.v_on_wall(j) {
        return g.wall_v(i, j);
    }
    if g.v_on_edge(j) {
        return vel;
    }
    let (f, s) = (vf[2 * g.v(i, j)], vf[2 * g.v(i, j) + 1]);
    f * vel + (1.0 - f) * s
}

/// The open part of cell `(i, j)`: the mean open fraction of its four faces.
#[inline(always)]
pub fn cell_open(g: &G, uf: &[f32], vf: &[f32], i: usize, j: usize) -> f32 {
    0.25 * ((u_open(g, uf, i, j) + u_open(g, uf, i + 1, j)) + (v_open(g, vf, i, j) + v_open(g, vf, i, j + 1)))
}

/// Divergence of cell `(i, j)` from the faces' fluxes.
pub fn divergence_cell(g: &G, (u, v): (&[f32], &[f32]), (uf, vf): (&[f32], &[f32]), i: usize, j: usize) -> f32 {
    let right = u_flux(g, uf, u[g.u(i + 1, j)], i + 1, j);
    let left = u_flux(g, uf, u[g.u(i, j)], i, j);
    let top = v_flux(g, vf, v[g.v(i, j + 1)], i, j + 1);
    let bottom = v_flux(g, vf, v[g.v(i, j)], i, j);
    (right - left + top - bottom) * g.inv_h
}

/// `divergence` with obstacles.
pub fn divergence(g: &G, uv: (&[f32], &[f32]), faces: (&[f32], &[f32]), out: &mut [f32]) {
    for_each_row(out, g.nx, |j, row| {
        for (i, d) in row.iter_mut().enumerate() {
            *d = divergence_cell(g, uv, faces, i, j);
        }
    });
}

/// The neighbours of cell `(i, j)`, each weighted by the open fraction of the face between:
/// `(Σ w f(k), Σ w)` in the order left, right, down, up, `k` the neighbour. Past the box's
/// edge the weight is the side's [`G::edge_weight`] and the term `w · edge`: the pressure is
/// zero there.
#[inline(always)]
fn weighted(g: &G, (uf, vf): (&[f32], &[f32]), i: usize, j: usize, edge: f32, f: impl Fn(usize) -> f32) -> (f32, f32) {
    let (mut sum, mut n) = (0.0f32, 0.0f32);
    let mut add = |w: f32, x: f32| {
        sum += w * x;
        n += w;
    };
    match prev(i, g.nx, g.px) {
        Some(il) => add(u_open(g, uf, i, j), f(g.c(il, j))),
        None => add(g.edge_weight(LEFT), edge),
    }
    match next(i, g.nx, g.px) {
        Some(ir) => add(u_open(g, uf, i + 1, j), f(g.c(ir, j))),
        None => add(g.edge_weight(RIGHT), edge),
    }
    match prev(j, g.ny, g.py) {
        Some(jd) => add(v_open(g, vf, i, j), f(g.c(i, jd))),
        None => add(g.edge_weight(BOTTOM), edge),
    }
    match next(j, g.ny, g.py) {
        Some(ju) => add(v_open(g, vf, i, j + 1), f(g.c(i, ju))),
        None => add(g.edge_weight(TOP), edge),
    }
    (sum, n)
}

/// A sweep's new value of cell `(i, j)`: `relax` says whether the cell is relaxed this pass
/// (Jacobi: always; SOR: its colour); the others keep their value (0 from a cold start).
fn sweep_cell(
    g: &G,
    params: &JacobiParams,
    scale: f32,
    (p, div): (&[f32], &[f32]),
    faces: (&[f32], &[f32]),
    i: usize,
    j: usize,
    relax: bool,
) -> f32 {
    let c = g.c(i, j);
    let (sum, n) = weighted(g, faces, i, j, 0.0, |k| p[k]);
    if params.zero_initial != 0 {
        return if relax && n != 0.0 { flush_subnormal(params.omega * scale * div[c] / n) } else { 0.0 };
    }
    if !relax || n == 0.0 {
        return p[c];
    }
    let pj = (sum + scale * div[c]) / n;
    flush_subnormal(p[c] + params.omega * (pj - p[c]))
}

/// `jacobi` (`colour: None`) or a `sor` pass with obstacles.
pub fn sweep(
    g: &G,
    params: &JacobiParams,
    dt: f32,
    pd: (&[f32], &[f32]),
    faces: (&[f32], &[f32]),
    colour: Option<u32>,
    out: &mut [f32],
) {
    let scale = -g.h * g.h / dt;
    for_each_row(out, g.nx, |j, row| {
        for (i, x) in row.iter_mut().enumerate() {
            let relax = colour.is_none_or(|c| ((i + j) & 1) as u32 == c);
            *x = sweep_cell(g, params, scale, pd, faces, i, j, relax);
        }
    });
}

/// `residual` with obstacles: `div − dt/h² Σ w (p_nbr − p)`, double-float differences.
pub fn residual(g: &G, dt: f32, (hi, lo, div): (&[f32], &[f32], &[f32]), faces: (&[f32], &[f32]), out: &mut [f32]) {
    let k = dt * g.inv_h * g.inv_h;
    for_each_row(out, g.nx, |j, row| {
        for (i, x) in row.iter_mut().enumerate() {
            let c = g.c(i, j);
            let edge = (0.0 - hi[c]) + (0.0 - lo[c]);
            let (sum, _) = weighted(g, faces, i, j, edge, |n| (hi[n] - hi[c]) + (lo[n] - lo[c]));
            *x = div[c] - k * sum;
        }
    });
}

/// `subtract_gradient` with obstacles: an open face as without them, a closed one the solid's
/// velocity.
pub fn subtract_gradient(
    g: &G,
    dt: f32,
    (u, v): (&mut [f32], &mut [f32]),
    (hi, lo): (&[f32], &[f32]),
    (uf, vf): (&[f32], &[f32]),
) {
    let k = dt * g.inv_h;
    let diff = |a: usize, b: usize| (hi[a] - hi[b]) + (lo[a] - lo[b]);
    for_each_row(u, g.nx + 1, |j, row| {
        for (i, x) in row.iter_mut().enumerate() {
            let f = 2 * g.u(i, j);
            *x = if g.u_on_wall(i) {
                g.wall_u(i, j)
            } else if g.u_on_edge(i) {
                // An open side, wholly open whatever an obstacle covers: zero pressure past it.
                let c = g.c(if i == 0 { 0 } else { g.nx - 1 }, j);
                let inside = hi[c] + lo[c];
                *x - k * if i == 0 { inside } else { -inside }
            } else if uf[f] == 0.0 {
                uf[f + 1]
            } else {
                let ic = g.ui(i);
                let left = if ic > 0 { ic - 1 } else { g.nx - 1 };
                *x - k * diff(g.c(ic, j), g.c(left, j))
            };
        }
    });
    for_each_row(v, g.nx, |j, row| {
        for (i, x) in row.iter_mut().enumerate() {
            let f = 2 * g.v(i, j);
            *x = if g.v_on_wall(j) {
                g.wall_v(i, j)
            } else if g.v_on_edge(j) {
                let c = g.c(i, if j == 0 { 0 } else { g.ny - 1 });
                let inside = hi[c] + lo[c];
                *x - k * if j == 0 { inside } else { -inside }
            } else if vf[f] == 0.0 {
                vf[f + 1]
            } else {
                let jc = g.vj(j);
                let down = if jc > 0 { jc - 1 } else { g.ny - 1 };
                *x - k * diff(g.c(i, jc), g.c(i, down))
            };
        }
    });
}

// The pressure solvers on multigrid levels with obstacles.

/// `b` of level 0 in `mg_load`'s residual mode, or `r` of `cg_init`: `scale div + Σ w ((hi_k −
/// hi_c) + (lo_k − lo_c))` at cell `(i, j)`.
#[inline(always)]
pub fn weighted_residual_b(
    g: &G,
    scale: f32,
    (hi, lo, div): (&[f32], &[f32], &[f32]),
    faces: (&[f32], &[f32]),
    i: usize,
    j: usize,
) -> f32 {
    let c = g.c(i, j);
    let edge = (0.0 - hi[c]) + (0.0 - lo[c]);
    let (sum, _) = weighted(g, faces, i, j, edge, |k| (hi[k] - hi[c]) + (lo[k] - lo[c]));
    scale * div[c] + sum
}

/// `mg_load` in residual mode, warm, with obstacles: level 0's `b` at `mg[b..]`.
pub fn mg_load_residual(g: &G, scale: f32, fields: (&[f32], &[f32], &[f32]), faces: (&[f32], &[f32]), b: &mut [f32]) {
    for_each_row(b, g.nx, |j, row| {
        for (i, x) in row.iter_mut().enumerate() {
            *x = weighted_residual_b(g, scale, fields, faces, i, j);
        }
    });
}

/// `cg_apply` with obstacles: `q = −Σ w (d_k − d_c)` on level 0.
pub fn cg_apply(g: &G, d: &[f32], faces: (&[f32], &[f32]), q: &mut [f32]) {
    for_each_row(q, g.nx, |j, row| {
        for (i, x) in row.iter_mut().enumerate() {
            let c = g.c(i, j);
            let (sum, _) = weighted(g, faces, i, j, 0.0 - d[c], |k| d[k] - d[c]);
            *x = -sum;
        }
    });
}

/// The neighbours of cell `(i, j)` of a multigrid level of `nx × ny` cells whose face weights
/// start at `w` in `faces` (right faces, then top faces), weighted: `(Σ w p_nbr, Σ w)` left,
/// right, down, up, reading the iterate through `p(k)` (`k` the neighbour's cell).
#[inline(always)]
fn level_weighted(
    g: &G,
    faces: &[f32],
    w: usize,
    (nx, ny): (usize, usize),
    i: usize,
    j: usize,
    p: impl Fn(usize) -> f32,
) -> (f32, f32) {
    let cells = nx * ny;
    let (mut sum, mut n) = (0.0f32, 0.0f32);
    let c = j * nx + i;
    // Past the box's edge the level's value is zero. Its zero lies half a level-0 cell past
    // the edge, so the weight is 2r / (r + 1), r the level's cell in level-0 cells (twin of
    // level_edge_weight in multigrid_solid.wgsl).
    let weight = |side: usize, n: usize, n0: usize| {
        let r = n0 as f32 / n as f32;
        g.edge_weight(side) * (2.0 * r / (r + 1.0))
    };
    let edge = |side: usize| if side < 2 { weight(side, nx, g.nx) } else { weight(side, ny, g.ny) };
    if let Some(il) = prev(i, nx, g.px) {
        let wt = faces[w + j * nx + il];
        sum += wt * p(j * nx + il);
        n += wt;
    } else {
        n += edge(LEFT);
    }
    if let Some(ir) = next(i, nx, g.px) {
        let wt = faces[w + c];
        sum += wt * p(j * nx + ir);
        n += wt;
    } else {
        n += edge(RIGHT);
    }
    if let Some(jd) = prev(j, ny, g.py) {
        let wt = faces[w + cells + jd * nx + i];
        sum += wt * p(jd * nx + i);
        n += wt;
    } else {
        n += edge(BOTTOM);
    }
    if let Some(ju) = next(j, ny, g.py) {
        let wt = faces[w + cells + c];
        sum += wt * p(ju * nx + i);
        n += wt;
    } else {
        n += edge(TOP);
    }
    (sum, n)
}

/// Where the face weights of the level whose `b` starts at `b` start.
fn faces_at(b: u32) -> usize {
    2 * (b as usize / 3)
}

/// `mg_smooth` with obstacles: one colour pass over the level's weighted stencil, written in
/// place of `tmp` while the iterate and right-hand side are read around it (small levels on
/// one thread: their passes are many and short).
pub fn mg_smooth(g: &G, params: &swirly_core::grid::uniforms::MgParams, mg: &mut [f32], faces: &[f32]) {
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let (b, src) = (params.b as usize, params.p as usize);
    let w = faces_at(params.b);
    let zero = params.zero_initial != 0;
    let (out, read) = split_around(mg, params.tmp as usize, nx * ny);
    let row = |j: usize, row: &mut [f32]| {
        for (i, x) in row.iter_mut().enumerate() {
            let c = j * nx + i;
            let old = if zero { 0.0 } else { read.get(src + c) };
            *x = old;
            if ((i + j) & 1) as u32 != params.colour {
                continue;
            }
            let (sum, n) = level_weighted(g, faces, w, (nx, ny), i, j, |k| if zero { 0.0 } else { read.get(src + k) });
            if n != 0.0 {
                let pj = (sum + read.get(b + c)) / n;
                *x = old + params.omega * (pj - old);
            }
        }
    };
    level_rows(out, nx, row);
}

/// Rows of `nx` values of a level, in parallel where the level is large.
fn level_rows(out: &mut [f32], nx: usize, f: impl Fn(usize, &mut [f32]) + Sync) {
    if out.len() < 16384 {
        out.chunks_mut(nx).enumerate().for_each(|(j, r)| f(j, r));
    } else {
        out.par_chunks_mut(nx).enumerate().for_each(|(j, r)| f(j, r));
    }
}

/// `mg_restrict` with obstacles: the level's weighted residual summed into the coarser `b`.
pub fn mg_restrict(g: &G, params: &swirly_core::grid::uniforms::MgParams, mg: &mut [f32], faces: &[f32]) {
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let (cnx, cny) = (params.cnx as usize, params.cny as usize);
    let (b, p) = (params.b as usize, params.p as usize);
    let w = faces_at(params.b);
    // The coarse level's b and p follow the fine level's arrays: b first, then p.
    let (cb, cp) = (params.cb as usize, params.cp as usize);
    let (out, read) = split_around(mg, cb, cnx * cny);
    let row = |cj: usize, row: &mut [f32]| {
        for (ci, x) in row.iter_mut().enumerate() {
            let mut r = 0.0f32;
            for (a, bb) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let (i, j) = (2 * ci + a, 2 * cj + bb);
                if i < nx && j < ny {
                    let c = j * nx + i;
                    let (sum, n) = level_weighted(g, faces, w, (nx, ny), i, j, |k| read.get(p + k));
                    r += read.get(b + c) - (n * read.get(p + c) - sum);
                }
            }
            *x = r;
        }
    };
    level_rows(out, cnx, row);
    mg[cp..cp + cnx * cny].fill(0.0);
}

/// `mg_faces`: a level's face weights (mode 0: level 0 from the grid's faces; mode 1: a coarse
/// level from the finer one, each coarse face the mean of the fine faces it covers).
pub fn mg_faces(g: &G, params: &swirly_core::grid::uniforms::MgParams, (uf, vf): (&[f32], &[f32]), faces: &mut [f32]) {
    let (nx, ny) = (params.nx as usize, params.ny as usize);
    let fine = faces_at(params.b);
    if params.colour == 0 {
        for j in 0..ny {
            for i in 0..nx {
                let c = j * nx + i;
                faces[fine + c] = u_open(g, uf, i + 1, j);
                faces[fine + nx * ny + c] = v_open(g, vf, i, j + 1);
            }
        }
        return;
    }
    let (cnx, cny) = (params.cnx as usize, params.cny as usize);
    let coarse = faces_at(params.cb);
    let top = fine + nx * ny;
    for j in 0..cny {
        for i in 0..cnx {
            let (fi, j0) = ((2 * i + 1).min(nx - 1), 2 * j);
            let mut right = faces[fine + j0 * nx + fi];
            if j0 + 1 < ny {
                right = 0.5 * (right + faces[fine + (j0 + 1) * nx + fi]);
            }
            let (fj, i0) = ((2 * j + 1).min(ny - 1), 2 * i);
            let mut up = faces[top + fj * nx + i0];
            if i0 + 1 < nx {
                up = 0.5 * (up + faces[top + fj * nx + i0 + 1]);
            }
            let c = j * cnx + i;
            faces[coarse + c] = right;
            faces[coarse + cnx * cny + c] = up;
        }
    }
}
