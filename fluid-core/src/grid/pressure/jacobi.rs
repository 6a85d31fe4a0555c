//! Weighted Jacobi sweeps (GPU Gems ch. 38, the stable-fluids seed): every cell relaxed from its
//! neighbours' previous values, ping-pong between `pressure` and `pressure_tmp`. Plain: one
//! sweep per dispatch; multi-sweep: up to [`MULTISWEEP_MAX`] sweeps per dispatch (a tile and its
//! halo in workgroup memory), the same arithmetic.

use crate::grid::FieldId::{Divergence, Pressure, PressureTmp, UFaces, VFaces};
use crate::grid::builder::Builder;
use crate::grid::kernels::{JACOBI, JACOBI_MULTISWEEP};
use crate::grid::uniforms::{JacobiParams, MULTISWEEP_MAX};

/// `iterations` sweeps with weight `omega`, from the pressure (`warm`) or zero; `fused`: up to
/// [`MULTISWEEP_MAX`] per dispatch.
pub(crate) fn push(b: &mut Builder, iterations: u32, omega: f32, warm: bool, fused: bool) {
    let mut src = Pressure;
    let mut done = 0;
    while done < iterations {
        let sweeps = if fused { (iterations - done).min(MULTISWEEP_MAX) } else { 1 };
        let p = JacobiParams { omega, zero_initial: super::cold(done, warm), colour: 0, sweeps };
        let dst = if src == Pressure { PressureTmp } else { Pressure };
        if fused {
            b.run(JACOBI_MULTISWEEP, &[src, Divergence, dst], Some(&p));
        } else {
            b.run(JACOBI, &[src, Divergence, dst, UFaces, VFaces], Some(&p));
        }
        src = dst;
        done += sweeps;
    }
    if src != Pressure {
        b.swap(Pressure, PressureTmp);
    }
}
