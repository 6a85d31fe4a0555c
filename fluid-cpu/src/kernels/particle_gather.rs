//! `particle_gather`: each slot takes the particle the sort put there: its position, velocity
//! and hash cell, so neighbours sit together in memory.

use rayon::prelude::*;
use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::HashParams;

use super::common::particles::{pairs, pairs_mut, words, words_mut};
use crate::dispatch::{Ctx, Slots};

/// The inputs of the gather.
pub struct Sorted<'a> {
    /// The particle index of each slot.
    pub order: &'a [u32],
    /// Positions by index.
    pub position: &'a [[f32; 2]],
    /// Velocities by index.
    pub velocity: &'a [[f32; 2]],
    /// Hash cells by index.
    pub keys: &'a [u32],
}

/// Gather the first `count` slots.
pub fn run(count: usize, s: Sorted<'_>, position: &mut [[f32; 2]], velocity: &mut [[f32; 2]], cell: &mut [u32]) {
    position[..count]
        .par_iter_mut()
        .zip(&mut velocity[..count])
        .zip(&mut cell[..count])
        .zip(&s.order[..count])
        .for_each(|(((x, v), c), &src)| {
            let src = src as usize;
            *x = s.position[src];
            *v = s.velocity[src];
            *c = s.keys[src];
        });
}

/// The table's entry.
pub(crate) fn dispatch(_: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: HashParams = d.params().unwrap_or_default();
    let sorted = Sorted {
        order: words(s.r("order")),
        position: pairs(s.r("position")),
        velocity: pairs(s.r("velocity")),
        keys: words(s.r("keys")),
    };
    let (position, velocity) = (pairs_mut(s.w("position_out")), pairs_mut(s.w("velocity_out")));
    run(p.count as usize, sorted, position, velocity, words_mut(s.w("cell")));
}
