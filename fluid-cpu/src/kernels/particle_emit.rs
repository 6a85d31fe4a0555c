//! `particle_emit`: an emitter's new particles of a step, into the slots after the live ones.
//! A row leaves the nozzle `late` seconds into the step, so it starts that far upstream and
//! reaches the nozzle then; a new particle's id is its slot.

use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::EmitParams;

use super::common::particles::{pairs_mut, words_mut};
use crate::dispatch::{Ctx, Slots};

/// New particle `j`'s position.
#[inline(always)]
pub fn placed(p: &EmitParams, j: u32) -> [f32; 2] {
    let k = p.index + j;
    let (row, col) = (k / p.per_row, k % p.per_row);
    let late = p.lead + row as f32 * p.interval;
    let off = col as f32 - 0.5 * (p.per_row - 1) as f32;
    [p.center[0] + p.across[0] * off - p.velocity[0] * late, p.center[1] + p.across[1] * off - p.velocity[1] * late]
}

/// Every new particle.
pub fn run(p: &EmitParams, position: &mut [[f32; 2]], velocity: &mut [[f32; 2]], ids: &mut [u32]) {
    for j in 0..p.count {
        let s = (p.first + j) as usize;
        position[s] = placed(p, j);
        velocity[s] = p.velocity;
        ids[s] = s as u32;
    }
}

/// The table's entry.
pub(crate) fn dispatch(_: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: EmitParams = d.params().unwrap_or_default();
    let position = pairs_mut(s.w("position"));
    let velocity = pairs_mut(s.w("velocity"));
    run(&p, position, velocity, words_mut(s.w("ids")));
}
