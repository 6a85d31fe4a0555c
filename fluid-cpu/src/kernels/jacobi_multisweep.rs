//! `jacobi_multisweep`: two weighted-Jacobi sweeps in one invocation. On the GPU the pair is
//! fused through workgroup memory to halve the memory traffic; on the CPU it is literally two
//! [`super::jacobi`] sweeps through a temporary, which defines the answer the shader must give.

use fluid_core::uniforms::JacobiParams;

use super::common::G;
use super::jacobi;

/// Two sweeps from `p` into `out`; `zero_initial` applies to the first.
pub fn run(g: &G, params: &JacobiParams, dt: f32, p: &[f32], div: &[f32], out: &mut [f32]) {
    let mut mid = vec![0.0f32; out.len()];
    jacobi::run(g, params, dt, p, div, &mut mid);
    let second = JacobiParams { zero_initial: 0, ..*params };
    jacobi::run(g, &second, dt, &mid, div, out);
}
