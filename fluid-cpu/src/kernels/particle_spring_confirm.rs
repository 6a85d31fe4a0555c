//! `particle_spring_confirm`: each particle keeps the springs it proposed whose partner
//! proposed it too, so a spring is held by both of its pair or by neither, and both hold the
//! same rest length (each computed it from the same distance and the same old length).

use rayon::prelude::*;
use swirly_core::ir::schedule::Dispatch;
use swirly_core::particles::{NO_SPRING, SpringParams};

use super::common::particles::{words, words_mut};
use crate::dispatch::{Ctx, Slots};

/// Whether the list `list` (two words an entry) names `a`.
fn names(list: &[u32], a: u32) -> bool {
    list.chunks_exact(2).take_while(|e| e[0] != NO_SPRING).any(|e| e[0] == a)
}

/// Every live particle's list, by id.
pub fn run(p: &SpringParams, proposals: &[u32], springs: &mut [u32]) {
    let lists = 2 * p.max_springs as usize;
    let n = p.count as usize;
    springs[..n * lists].par_chunks_exact_mut(lists).enumerate().for_each(|(a, out)| {
        let mine = &proposals[a * lists..(a + 1) * lists];
        let mut k = 0;
        for e in mine.chunks_exact(2).take_while(|e| e[0] != NO_SPRING) {
            let b = e[0] as usize;
            if names(&proposals[b * lists..(b + 1) * lists], a as u32) {
                out[2 * k] = e[0];
                out[2 * k + 1] = e[1];
                k += 1;
            }
        }
        for e in out[2 * k..].chunks_exact_mut(2) {
            e[0] = NO_SPRING;
            e[1] = 0;
        }
    });
}

/// The table's entry.
pub(crate) fn dispatch(_: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: SpringParams = d.params().unwrap_or_default();
    let proposals = words(s.r("proposals"));
    run(&p, proposals, words_mut(s.w("springs")));
}
