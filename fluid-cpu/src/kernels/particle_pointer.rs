//! `particle_pointer`: the step's splats on each particle's velocity, as a pointer: each adds
//! its falloff weight `w` times its velocity, and `w` times its `density` toward its centre
//! (away from it when negative), world units per second.

use rayon::prelude::*;
use swirly_core::frame::uniform::SplatGpu;
use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::HashParams;
use swirly_core::splat::splat_weight;

use super::common::G;
use super::common::particles::{pairs, pairs_mut};
use super::splat::distance2;
use crate::dispatch::{Ctx, Slots};

/// The velocity `v` of a particle at `x` after `splats`.
#[inline(always)]
pub fn pushed(g: &G, splats: &[SplatGpu], x: [f32; 2], v: [f32; 2]) -> [f32; 2] {
    let mut v = v;
    for s in splats {
        let w = splat_weight(s, distance2(g, s, x[0], x[1]));
        if w > 0.0 {
            let r = [s.center[0] - x[0], s.center[1] - x[1]];
            let d = (r[0] * r[0] + r[1] * r[1]).sqrt();
            let pull = if d > 0.0 { [r[0] / d * s.density, r[1] / d * s.density] } else { [0.0, 0.0] };
            v = [v[0] + w * (s.velocity[0] + pull[0]), v[1] + w * (s.velocity[1] + pull[1])];
        }
    }
    v
}

/// Every live particle.
pub fn run(g: &G, count: usize, splats: &[SplatGpu], position: &[[f32; 2]], velocity: &mut [[f32; 2]]) {
    if splats.is_empty() {
        return;
    }
    velocity[..count].par_iter_mut().zip(&position[..count]).for_each(|(v, x)| *v = pushed(g, splats, *x, *v));
}

/// The table's entry.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: HashParams = d.params().unwrap_or_default();
    let position = pairs(s.r("position"));
    run(c.g, p.count as usize, c.splats, position, pairs_mut(s.w("velocity")));
}
