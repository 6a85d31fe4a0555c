//! `particle_collide`: a particle past its container is put back on its edge; its velocity is
//! its position change over dt, with any outward part removed, friction taken from the
//! tangential part, and the anti-stick speed given inward (the fix for particles that
//! would rest on the edge). Within reach of stickiness a particle is pulled toward a wall by
//! `dt k_stick d (1 − d / reach)` (Clavet et al. 2005, section 5.3).

use rayon::prelude::*;
use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::{CollideParams, SHAPE_BOX};

use super::common::particles::{pairs, pairs_mut};
use crate::dispatch::{Ctx, Slots};

/// The speed toward a wall at distance `d`: `dt k_stick d (1 − d / reach)` within reach.
#[inline(always)]
fn stick_pull(p: &CollideParams, d: f32, dt: f32) -> f32 {
    if d >= p.stick_distance { 0.0 } else { dt * p.stickiness * d * (1.0 - d / p.stick_distance) }
}

/// The position and velocity of a particle at `x` that started the substep at `prev`.
#[inline(always)]
pub fn collide(p: &CollideParams, dt: f32, x: [f32; 2], prev: [f32; 2]) -> ([f32; 2], [f32; 2]) {
    let mut x = x;
    if p.shape == SHAPE_BOX {
        // Per axis: -1 below, +1 above, 0 inside.
        let mut side = [0i32; 2];
        for a in 0..2 {
            if x[a] < p.lo[a] {
                x[a] = p.lo[a];
                side[a] = -1;
            } else if x[a] > p.hi[a] {
                x[a] = p.hi[a];
                side[a] = 1;
            }
        }
        let mut v = [(x[0] - prev[0]) / dt, (x[1] - prev[1]) / dt];
        for a in 0..2 {
            let b = 1 - a;
            if side[a] < 0 {
                v[a] = v[a].max(0.0) + p.anti_stick;
                v[b] *= 1.0 - p.friction;
            } else if side[a] > 0 {
                v[a] = v[a].min(0.0) - p.anti_stick;
                v[b] *= 1.0 - p.friction;
            }
        }
        if p.stickiness > 0.0 {
            for a in 0..2 {
                v[a] -= stick_pull(p, x[a] - p.lo[a], dt);
                v[a] += stick_pull(p, p.hi[a] - x[a], dt);
            }
        }
        return (x, v);
    }
    let (c, radius) = (p.lo, p.hi[0]);
    let r = [x[0] - c[0], x[1] - c[1]];
    let l2 = r[0] * r[0] + r[1] * r[1];
    if l2 <= radius * radius {
        let mut v = [(x[0] - prev[0]) / dt, (x[1] - prev[1]) / dt];
        if p.stickiness > 0.0 && l2 > 0.0 {
            let l = l2.sqrt();
            let pull = stick_pull(p, radius - l, dt);
            v = [v[0] + pull * r[0] / l, v[1] + pull * r[1] / l];
        }
        return (x, v);
    }
    let l = l2.sqrt();
    let n = [r[0] / l, r[1] / l];
    x = [c[0] + n[0] * radius, c[1] + n[1] * radius];
    let mut v = [(x[0] - prev[0]) / dt, (x[1] - prev[1]) / dt];
    let vn = v[0] * n[0] + v[1] * n[1];
    let t = [v[0] - vn * n[0], v[1] - vn * n[1]];
    let out = vn.max(0.0);
    v = [
        v[0] - out * n[0] - p.friction * t[0] - p.anti_stick * n[0],
        v[1] - out * n[1] - p.friction * t[1] - p.anti_stick * n[1],
    ];
    (x, v)
}

/// Every live particle.
pub fn run(p: &CollideParams, dt: f32, position: &mut [[f32; 2]], previous: &[[f32; 2]], velocity: &mut [[f32; 2]]) {
    let n = p.count as usize;
    position[..n].par_iter_mut().zip(&previous[..n]).zip(&mut velocity[..n]).for_each(|((x, prev), v)| {
        (*x, *v) = collide(p, dt, *x, *prev);
    });
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: CollideParams = d.params().unwrap_or_default();
    let position = pairs_mut(s.w("position"));
    let previous = pairs(s.r("previous"));
    run(&p, c.dt * p.dt_scale, position, previous, pairs_mut(s.w("velocity")));
}
