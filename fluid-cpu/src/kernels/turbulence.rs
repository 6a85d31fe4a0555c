//! `turbulence`: curl-noise turbulence on one u-face and one v-face. A stream function ψ of
//! value noise (octaves of a hashed lattice in x, y and time, quintic fade) is sampled at the
//! cell corners; the force is its curl, `(∂ψ/∂y, −∂ψ/∂x)`, as differences across each face, so
//! the unmasked force has zero discrete divergence; ψ fades to zero toward the walls, so none
//! crosses them. On a periodic axis the lattice wraps with the box. Optionally weighted by a cell field beside the face, and by the face's open
//! fraction with obstacles.

use swirly_core::grid::uniforms::TurbulenceParams;

use super::common::{G, for_each_row, prev};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// A lattice point's value in `[−1, 1)`: an integer hash of its three coordinates.
#[inline(always)]
pub fn lattice_hash(x: u32, y: u32, z: u32) -> f32 {
    let mut h = x.wrapping_mul(0x8da6_b343) ^ y.wrapping_mul(0xd816_3841) ^ z.wrapping_mul(0xcb1a_b31f);
    h = (h ^ (h >> 16)).wrapping_mul(0x7feb_352d);
    h = (h ^ (h >> 15)).wrapping_mul(0x846c_a68b);
    h ^= h >> 16;
    (h >> 8) as f32 * (2.0 / 16_777_216.0) - 1.0
}

#[inline(always)]
fn fade(t: f32) -> f32 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

/// Lattice indices of the cell holding coordinate `p`, wrapped by `period` (0: none).
#[inline(always)]
fn corners(p: f32, period: u32) -> (u32, u32) {
    let k = p.floor() as i32;
    if period == 0 {
        return (k as u32, k.wrapping_add(1) as u32);
    }
    let n = period as i32;
    let a = ((k % n) + n) % n;
    (a as u32, ((a + 1) % n) as u32)
}

#[inline(always)]
fn lerp2(c00: f32, c10: f32, c01: f32, c11: f32, tx: f32, ty: f32) -> f32 {
    let a = c00 + (c10 - c00) * tx;
    let b = c01 + (c11 - c01) * tx;
    a + (b - a) * ty
}

/// Value noise at `(x, y, z)` in lattice units.
#[inline(always)]
pub fn value_noise(x: f32, y: f32, z: f32, px: u32, py: u32) -> f32 {
    let (cx, cy, cz) = (corners(x, px), corners(y, py), corners(z, 0));
    let (tx, ty, tz) = (fade(x - x.floor()), fade(y - y.floor()), fade(z - z.floor()));
    let layer = |z: u32| {
        let h = |x: u32, y: u32| lattice_hash(x, y, z);
        lerp2(h(cx.0, cy.0), h(cx.1, cy.0), h(cx.0, cy.1), h(cx.1, cy.1), tx, ty)
    };
    let (a, b) = (layer(cz.0), layer(cz.1));
    a + (b - a) * tz
}

/// The stream function at corner `(i, j)` (canonical indices) at time `time`.
#[inline(always)]
pub fn psi(g: &G, p: &TurbulenceParams, time: f32, i: usize, j: usize) -> f32 {
    let x = i as f32 * g.h * p.inv_scale[0];
    let y = j as f32 * g.h * p.inv_scale[1];
    let z = time * p.speed;
    let (mut sum, mut f, mut w) = (0.0f32, 1.0f32, 1.0f32);
    for k in 0..p.octaves {
        let period = (p.period[0] * f as u32, p.period[1] * f as u32);
        sum += w * value_noise(x * f, y * f, z * f + 17.0 * k as f32, period.0, period.1);
        f *= 2.0;
        w *= 0.5;
    }
    p.amplitude * sum / p.inv_scale[0] * wall_ramp(g, p, i, j)
}

/// Bridson's ramp: 0 at 0, 1 from 1 on, smooth between.
#[inline(always)]
fn ramp(r: f32) -> f32 {
    let x = r.min(1.0);
    x * (15.0 / 8.0 - x * x * (10.0 / 8.0 - x * x * (3.0 / 8.0)))
}

/// ψ fades to zero over one eddy toward each wall (a side nothing crosses), so that no flow
/// is pushed through it (Bridson, Hourihan & Nordenstam 2007).
#[inline(always)]
fn wall_ramp(g: &G, p: &TurbulenceParams, i: usize, j: usize) -> f32 {
    let mut w = 1.0f32;
    if g.u_on_wall(0) {
        w *= ramp(i as f32 * g.h * p.inv_scale[0]);
    }
    if g.u_on_wall(g.nx) {
        w *= ramp((g.nx - i) as f32 * g.h * p.inv_scale[0]);
    }
    if g.v_on_wall(0) {
        w *= ramp(j as f32 * g.h * p.inv_scale[1]);
    }
    if g.v_on_wall(g.ny) {
        w *= ramp((g.ny - j) as f32 * g.h * p.inv_scale[1]);
    }
    w
}

/// The mask's weight between cells `a` and `b`.
#[inline(always)]
fn weight(p: &TurbulenceParams, mask: &[f32], a: usize, b: usize) -> f32 {
    if p.mask == 0 {
        return 1.0;
    }
    let m = 0.5 * (mask[a] + mask[b]);
    ((m - p.mask_offset) / p.mask_full).clamp(0.0, 1.0)
}

/// The cell before face `c` along an axis of `n` cells, or cell `c` at the near edge.
#[inline(always)]
fn before(c: usize, n: usize, periodic: bool) -> usize {
    prev(c, n, periodic).unwrap_or(c)
}

/// The fields one invocation reads and writes.
pub struct TurbulenceFields<'a> {
    /// x-velocity.
    pub u: &'a mut [f32],
    /// y-velocity.
    pub v: &'a mut [f32],
    /// The mask's cell field (empty without a mask).
    pub mask: &'a [f32],
    /// With obstacles, `u_faces` and `v_faces`.
    pub faces: Option<(&'a [f32], &'a [f32])>,
}

/// Add the force times `dt` to every face.
pub fn run(g: &G, p: &TurbulenceParams, (dt, time): (f32, f32), f: TurbulenceFields<'_>) {
    let TurbulenceFields { u, v, mask, faces } = f;
    for_each_row(u, g.nx + 1, |j, row| {
        for (i, x) in row.iter_mut().enumerate() {
            if g.u_on_wall(i) {
                continue;
            }
            let ic = g.ui(i);
            let r = ic.min(g.nx - 1);
            let mut force = (psi(g, p, time, ic, g.vj(j + 1)) - psi(g, p, time, ic, j)) * g.inv_h;
            force *= weight(p, mask, g.c(before(ic, g.nx, g.px), j), g.c(r, j));
            if let Some((uf, _)) = faces {
                force *= uf[2 * g.u(i, j)];
            }
            *x += dt * force;
        }
    });
    for_each_row(v, g.nx, |j, row| {
        if g.v_on_wall(j) {
            return;
        }
        let jc = g.vj(j);
        let t = jc.min(g.ny - 1);
        for (i, x) in row.iter_mut().enumerate() {
            let mut force = -(psi(g, p, time, g.ui(i + 1), jc) - psi(g, p, time, i, jc)) * g.inv_h;
            force *= weight(p, mask, g.c(i, before(jc, g.ny, g.py)), g.c(i, t));
            if let Some((_, vf)) = faces {
                force *= vf[2 * g.v(i, j)];
            }
            *x += dt * force;
        }
    });
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: TurbulenceParams = d.params().unwrap_or_default();
    let faces = c.g.solids.then(|| (s.r("u_faces"), s.r("v_faces")));
    let f = TurbulenceFields { u: s.w("u"), v: s.w("v"), mask: s.r("mask"), faces };
    run(c.g, &p, (c.dt, c.time), f);
}
