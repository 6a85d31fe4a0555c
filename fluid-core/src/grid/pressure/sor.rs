//! Red-black successive over-relaxation: one iteration is a red pass (cells with `i + j` even
//! relaxed from their neighbours) and a black pass. Each pass writes every cell into the other
//! buffer of a ping-pong pair (the other colour copied), so passes are race-free and
//! deterministic on any backend.

use crate::grid::FieldId::{Divergence, Pressure, PressureTmp, UFaces, VFaces};
use crate::grid::builder::Builder;
use crate::grid::kernels::SOR;
use crate::grid::uniforms::JacobiParams;

/// `iterations` red+black pairs with weight `omega`, from the pressure (`warm`) or zero.
pub(crate) fn push(b: &mut Builder, iterations: u32, omega: f32, warm: bool) {
    let mut src = Pressure;
    for k in 0..iterations {
        for colour in [0, 1] {
            let p = JacobiParams { omega, zero_initial: super::cold(k, warm) * (1 - colour), colour, sweeps: 1 };
            let dst = if src == Pressure { PressureTmp } else { Pressure };
            b.run(SOR, &[src, Divergence, dst, UFaces, VFaces], Some(&p));
            src = dst;
        }
    }
    if src != Pressure {
        b.swap(Pressure, PressureTmp);
    }
}
