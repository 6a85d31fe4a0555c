//! `expand`: the combustion's divergence source taken from the projection's right-hand side at
//! one cell, so that the projected velocity keeps that divergence.

use rayon::prelude::*;

use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// `divergence −= expansion`, cell by cell.
pub fn run(expansion: &[f32], divergence: &mut [f32]) {
    divergence.par_iter_mut().zip(expansion.par_iter()).for_each(|(d, e)| *d -= e);
}

/// The table's entry.
pub(crate) fn dispatch(_c: &mut Ctx<'_>, _d: &Dispatch, s: &mut Slots<'_>) {
    run(s.r("expansion"), s.w("divergence"));
}
