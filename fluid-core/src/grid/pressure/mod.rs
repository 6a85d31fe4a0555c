//! The pressure solvers, one file per method: each turns a [`Pressure`] setting into the
//! dispatches of one solve, which ends with the result in `pressure`.
//!
//! Every solver solves the same unscaled equation `(A p)_c = n_c p_c − Σ p_nbr = b_c` with
//! `b = −h² ∇·u / dt` (walls Neumann, periodic axes wrapping); `subtract_gradient` then makes
//! the velocity divergence-free.

pub mod jacobi;
pub(crate) mod layout;
pub mod mgpcg;
pub mod multigrid;
pub mod poisson_filter;
pub mod relaxation;
pub mod sor;

use crate::grid::builder::Builder;
use crate::grid::params::{Precision, Pressure, PressureSolver};

/// The dispatches of one solve by `pr` (its iterations from its warm start or zero), ending
/// with the result in `pressure`.
pub(crate) fn push_solve(b: &mut Builder, pr: &Pressure) {
    let omega = pr.omega_for(b.grid().longest_side());
    match pr.solver {
        PressureSolver::Jacobi => jacobi::push(b, pr.iterations, omega, pr.warm_start, false),
        PressureSolver::JacobiMultisweep => jacobi::push(b, pr.iterations, omega, pr.warm_start, true),
        PressureSolver::Sor => sor::push(b, pr.iterations, omega, pr.warm_start),
        PressureSolver::Relaxation => relaxation::push(b, pr.iterations, omega, pr.warm_start),
        PressureSolver::Multigrid => {
            multigrid::push(b, pr.iterations, omega, !pr.warm_start, pr.precision() == Precision::DoubleFloat)
        }
        PressureSolver::Mgpcg => mgpcg::push(b, pr.iterations, omega, !pr.warm_start),
        PressureSolver::PoissonFilter => poisson_filter::push(b, pr.iterations, pr.rank, pr.warm_start),
    }
}

/// 1 for the first iteration of a solve from zero (its pressure taken as zero), else 0.
fn cold(k: u32, warm: bool) -> u32 {
    u32::from(k == 0 && !warm)
}
