//! `mg_store`: the pressure from level 0's iterate (or MGPCG's `x`), by the mode in `colour`:
//! [`STORE_COPY`] (`pressure = p`, `pressure_lo = 0`), [`STORE_PAIR`] (the double-float pair at
//! `p`) or [`STORE_ADD`] (`p` added to the double-float pressure).

#[cfg(doc)]
use swirly_core::grid::pressure::multigrid::STORE_COPY;
use swirly_core::grid::pressure::multigrid::{STORE_ADD, STORE_PAIR};
use swirly_core::grid::uniforms::MgParams;

use super::common::df_accumulate;
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// Write `pressure` and `pressure_lo`.
pub fn run(params: &MgParams, mg: &[f32], pressure: &mut [f32], pressure_lo: &mut [f32]) {
    let n = pressure.len();
    let at = params.p as usize;
    let p = &mg[at..at + n];
    match params.colour {
        STORE_PAIR => {
            pressure.copy_from_slice(p);
            pressure_lo.copy_from_slice(&mg[at + n..at + 2 * n]);
        }
        STORE_ADD => {
            df_accumulate(pressure, pressure_lo, p);
        }
        _ => {
            pressure.copy_from_slice(p);
            pressure_lo.fill(0.0);
        }
    }
}

/// The table's entry: a dispatch of `mg_store` on the CPU.
pub(crate) fn dispatch(_c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: MgParams = d.params().unwrap_or_default();
    run(&p, s.r("mg"), s.w("pressure"), s.w("pressure_lo"));
}
