//! `cg_update`: α = (r·z) / (d·q) (zero when d·q is); `x += α d`, `r −= α q`.

use fluid_core::uniforms::CgParams;

/// α from the scalars.
pub fn alpha(params: &CgParams, mg: &[f32]) -> f32 {
    let dq = mg[params.scalars as usize + 2];
    if dq == 0.0 { 0.0 } else { mg[params.scalars as usize + params.slot as usize] / dq }
}

/// Update `x` and `r` over level 0.
pub fn run(params: &CgParams, mg: &mut [f32]) {
    let a = alpha(params, mg);
    for c in 0..(params.nx * params.ny) as usize {
        let d = mg[params.d as usize + c];
        let q = mg[params.q as usize + c];
        mg[params.x as usize + c] += a * d;
        mg[params.r as usize + c] -= a * q;
    }
}
