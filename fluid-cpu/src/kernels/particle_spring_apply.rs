//! `particle_spring_apply`: each particle moved by its half of each of its springs'
//! displacements, `D = dt² k (1 − L/h)(L − r)` along the pair (Clavet et al. 2005,
//! algorithm 2); the partner takes the other half, in the opposite direction, in its own
//! invocation, so the pair's momentum is unchanged.

use rayon::prelude::*;
use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::{NO_SPRING, SpringParams};

use super::common::particles::{direction, pairs, pairs_mut, words};
use crate::dispatch::{Ctx, Slots};

/// What the pass reads.
pub struct Inputs<'a> {
    /// Positions, in sorted order.
    pub position: &'a [[f32; 2]],
    /// Each slot's stable id.
    pub ids: &'a [u32],
    /// Each id's slot.
    pub slots: &'a [u32],
    /// The springs, by id.
    pub springs: &'a [u32],
}

/// The moved position of the particle in slot `i`.
#[inline(always)]
pub fn moved(p: &SpringParams, dt: f32, s: &Inputs<'_>, i: u32) -> [f32; 2] {
    let half_k = 0.5 * dt * dt * p.stiffness;
    let k_max = p.max_springs as usize;
    let base = 2 * s.ids[i as usize] as usize * k_max;
    let xi = s.position[i as usize];
    let mut dx = [0.0f32; 2];
    for e in s.springs[base..base + 2 * k_max].chunks_exact(2) {
        if e[0] == NO_SPRING {
            break;
        }
        let rest = f32::from_bits(e[1]);
        let j = s.slots[e[0] as usize];
        let xj = s.position[j as usize];
        let r = [xj[0] - xi[0], xj[1] - xi[1]];
        let d = (r[0] * r[0] + r[1] * r[1]).sqrt();
        let n = direction(r, d, i, j);
        let push = half_k * (1.0 - rest / p.radius) * (rest - d);
        dx[0] -= push * n[0];
        dx[1] -= push * n[1];
    }
    [xi[0] + dx[0], xi[1] + dx[1]]
}

/// Every live particle.
pub fn run(p: &SpringParams, dt: f32, s: &Inputs<'_>, out: &mut [[f32; 2]]) {
    out[..p.count as usize].par_iter_mut().enumerate().for_each(|(i, o)| *o = moved(p, dt, s, i as u32));
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: SpringParams = d.params().unwrap_or_default();
    let inputs = Inputs {
        position: pairs(s.r("position")),
        ids: words(s.r("ids")),
        slots: words(s.r("slots")),
        springs: words(s.r("springs")),
    };
    run(&p, c.dt * p.dt_scale, &inputs, pairs_mut(s.w("moved")));
}
