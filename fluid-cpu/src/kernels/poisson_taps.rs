//! `poisson_taps`: write up to eight Poisson-filter taps into the packed buffer (setup).

use fluid_core::uniforms::TapsParams;

/// Write the taps.
pub fn run(params: &TapsParams, mg: &mut [f32]) {
    let n = params.count.min(8) as usize;
    let o = params.offset as usize;
    mg[o..o + n].copy_from_slice(&params.taps[..n]);
}
