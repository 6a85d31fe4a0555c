//! `jacobi_multisweep`: `params.sweeps` weighted-Jacobi sweeps (at most
//! [`MULTISWEEP_MAX`]) in one invocation. On the GPU they are fused through workgroup memory
//! (temporal blocking: one read and one write of pressure per dispatch instead of per sweep);
//! on the CPU they are literally that many [`super::jacobi`] sweeps through temporaries, which
//! defines the answer the shader must give.

use swirly_core::grid::uniforms::{JacobiParams, MULTISWEEP_MAX};

use super::common::G;
use super::jacobi;
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// `params.sweeps` sweeps (clamped to 1 ..= [`MULTISWEEP_MAX`], as the shader does) from `p`
/// into `out`; `zero_initial` applies to the first.
pub fn run(g: &G, params: &JacobiParams, dt: f32, p: &[f32], div: &[f32], out: &mut [f32]) {
    let sweeps = params.sweeps.clamp(1, MULTISWEEP_MAX);
    let later = JacobiParams { zero_initial: 0, ..*params };
    if sweeps == 1 {
        jacobi::run(g, params, dt, p, div, out);
        return;
    }
    let mut a = vec![0.0f32; out.len()];
    jacobi::run(g, params, dt, p, div, &mut a);
    let mut b = vec![0.0f32; out.len()];
    for _ in 1..sweeps - 1 {
        jacobi::run(g, &later, dt, &a, div, &mut b);
        std::mem::swap(&mut a, &mut b);
    }
    jacobi::run(g, &later, dt, &a, div, out);
}

/// The table's entry: a dispatch of `jacobi_multisweep` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: JacobiParams = d.params().unwrap_or_default();
    run(c.g, &p, c.dt, s.r("pressure"), s.r("divergence"), s.w("pressure_out"));
}
