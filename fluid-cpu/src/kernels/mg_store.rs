//! `mg_store`: the pressure from level 0's iterate.

use fluid_core::uniforms::MgParams;

/// Copy level 0's `p` into `pressure`.
pub fn run(params: &MgParams, mg: &[f32], pressure: &mut [f32]) {
    let n = pressure.len();
    pressure.copy_from_slice(&mg[params.p as usize..params.p as usize + n]);
}
