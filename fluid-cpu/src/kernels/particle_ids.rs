//! `particle_ids`: each slot takes the stable id of the particle the sort put there, and that
//! id learns its slot, so a spring list (kept by id) finds its partner's sorted data.

use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::HashParams;

use super::common::particles::{words, words_mut};
use crate::dispatch::{Ctx, Slots};

/// The first `count` slots.
pub fn run(count: usize, order: &[u32], ids: &[u32], ids_out: &mut [u32], slots: &mut [u32]) {
    for (s, (out, &src)) in ids_out[..count].iter_mut().zip(&order[..count]).enumerate() {
        *out = ids[src as usize];
        slots[*out as usize] = s as u32;
    }
}

/// The table's entry.
pub(crate) fn dispatch(_: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: HashParams = d.params().unwrap_or_default();
    let (order, ids) = (words(s.r("order")), words(s.r("ids")));
    let ids_out = words_mut(s.w("ids_out"));
    run(p.count as usize, order, ids, ids_out, words_mut(s.w("slots")));
}
