//! `poisson_taps`: write up to eight Poisson-filter taps into the packed buffer (setup).

use crate::dispatch::{Ctx, Slots};
use swirly_core::grid::uniforms::TapsParams;
use swirly_core::ir::schedule::Dispatch;

/// Write the taps.
pub fn run(params: &TapsParams, mg: &mut [f32]) {
    let n = params.count.min(8) as usize;
    let o = params.offset as usize;
    mg[o..o + n].copy_from_slice(&params.taps[..n]);
}

/// The table's entry: a dispatch of `poisson_taps` on the CPU.
pub(crate) fn dispatch(_c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: TapsParams = d.params().unwrap_or_default();
    run(&p, s.w("mg"));
}
