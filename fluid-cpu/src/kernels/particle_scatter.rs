//! `particle_scatter`: each particle takes a slot in its cell's run, `starts[k] + count − 1`
//! with the count taken one down (the shader's atomic subtract), so the counts end at zero.
//! Taken from the last particle to the first, each run comes out in index order, which
//! `particle_order` then keeps; on a GPU the run's order is whatever the atomics gave.

use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::HashParams;

use super::common::particles::{words, words_mut};
use crate::dispatch::{Ctx, Slots};

/// Scatter the first `count` particles.
pub fn run(count: usize, keys: &[u32], starts: &[u32], counts: &mut [u32], order: &mut [u32]) {
    for i in (0..count).rev() {
        let k = keys[i] as usize;
        counts[k] -= 1;
        order[(starts[k] + counts[k]) as usize] = i as u32;
    }
}

/// The table's entry.
pub(crate) fn dispatch(_: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: HashParams = d.params().unwrap_or_default();
    let (keys, starts) = (words(s.r("keys")), words(s.r("starts")));
    let counts = words_mut(s.w("counts"));
    run(p.count as usize, keys, starts, counts, words_mut(s.w("order")));
}
