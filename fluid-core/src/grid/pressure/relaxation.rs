//! The per-cell relaxation: each iteration corrects the velocity itself, every face
//! taking the average of its two cells' corrections, and accumulates the equivalent pressure.
//! It equals weighted Jacobi with ω/2; its pressure is the step's correction, so it starts
//! from zero every step.

use crate::grid::FieldId::{Pressure, U, UTmp, V, VTmp};
use crate::grid::builder::Builder;
use crate::grid::kernels::RELAX;
use crate::grid::uniforms::JacobiParams;

/// `iterations` relaxations with weight `omega`, the first from zero pressure unless `warm`.
pub(crate) fn push(b: &mut Builder, iterations: u32, omega: f32, warm: bool) {
    for k in 0..iterations {
        let p = JacobiParams { omega, zero_initial: super::cold(k, warm), colour: 0, sweeps: 1 };
        b.run(RELAX, &[U, V, Pressure, UTmp, VTmp], Some(&p));
        b.swap(U, UTmp);
        b.swap(V, VTmp);
    }
}
