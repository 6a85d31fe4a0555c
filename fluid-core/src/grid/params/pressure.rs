//! The pressure solve: which solver, its iterations, tolerance and precision.

use serde::{Deserialize, Serialize};

use super::validate::iterations;
use crate::frame::finite;
use swirly_ir::{Error, Result};

/// Pressure solvers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PressureSolver {
    /// Weighted Jacobi: `p ← p + ω (p_jacobi − p)`.
    #[default]
    Jacobi,
    /// The same sweeps, two per dispatch through GPU workgroup memory (temporal blocking):
    /// the same answer with half the memory traffic and half the barriers.
    JacobiMultisweep,
    /// Red-black Gauss–Seidel with successive over-relaxation: each iteration updates the red
    /// cells (`i + j` even) from their black neighbours, then the black cells from the new red
    /// values; `p ← p + ω (p_gs − p)` with ω in (0, 2).
    Sor,
    /// Geometric multigrid V-cycles ([`crate::grid::pressure::multigrid`]): two red-black Gauss–Seidel
    /// iterations before and after each coarse-grid correction, residual restriction by
    /// summing children, bilinear prolongation; `iterations` counts V-cycles.
    Multigrid,
    /// A per-cell relaxation of the velocity itself: each cell spreads its
    /// divergence over its open faces and each face takes the average of its two cells'
    /// corrections (scaled by ω, default 1). It is weighted Jacobi with ω/2 in disguise; the
    /// accumulated pressure is kept so the residual can be reported.
    Relaxation,
    /// Conjugate gradients preconditioned by one multigrid V-cycle (symmetric smoothing),
    /// with its dot products reduced on the device; `iterations` counts CG iterations.
    Mgpcg,
    /// The separable Poisson filter ([`crate::grid::pressure::poisson_filter`]): `iterations` (at most 32)
    /// Jacobi sweeps unrolled into one kernel, factored to `rank` pairs of 1D filters, applied
    /// in two passes (warm-started: four).
    PoissonFilter,
}

/// How the multigrid and MGPCG solvers hold the pressure they converge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Precision {
    /// Double-float: the pressure is kept as `pressure + pressure_lo` (two f32s, about 44
    /// significant bits); each cycle's residual is computed from it in difference form and the
    /// correction added to it exactly, so the relative residual keeps falling to about 1e-7.
    /// Costs one more pass over the grid per V-cycle (MGPCG: none).
    DoubleFloat,
    /// One f32: the cheapest cycle; the relative residual stalls where the f32 rounding of the
    /// pressure leaves it (measured on the solver benchmark's problem: 1e-5 at 256², 3e-5 at
    /// 1024², above 1e-4 at 4096²). Multigrid only.
    Single,
}

/// Projection settings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Pressure {
    /// Solver: `jacobi`, `jacobi-multisweep`, `sor`, `multigrid`, `mgpcg`, `poisson-filter` or
    /// `relaxation` (default: `jacobi`).
    pub solver: PressureSolver,
    /// Sweeps of `jacobi`, iterations of `sor` (one red and one black pass each), V-cycles of
    /// `multigrid` (default: `40`; at most [`MAX_ITERATIONS`](super::MAX_ITERATIONS)).
    pub iterations: u32,
    /// Relaxation weight ω. Weighted Jacobi needs ω in (0, 1] (default `0.9`; plain Jacobi,
    /// ω = 1, never damps the checkerboard mode on a periodic or cell-centred wall grid: its
    /// amplification factor is `|1 − 2ω|`). SOR needs ω in (0, 2); its default is the
    /// asymptotic optimum for the Poisson problem, `2 / (1 + sin(π / N))` with N the longer side
    /// of the grid, capped at `1 + 0.01^(1/k)` for k iterations: SOR damps the highest
    /// frequencies only by `|1 − ω|` per iteration, and a near-2 ω with a small budget (say 30
    /// iterations at 256²) leaves them undamped and the flow blows up over the steps.
    pub omega: Option<f32>,
    /// Start from the previous step's pressure instead of zero (default: `true`).
    pub warm_start: bool,
    /// Stop a step's solve once its relative residual ‖b − A p‖ / ‖b‖ is at most this, with
    /// `iterations` as the cap (default: none, always `iterations`). The residual is checked
    /// every `PressureSolver::check_every` iterations; each check reads a reduction back, so
    /// the CPU waits for the GPU there.
    pub tolerance: Option<f32>,
    /// `poisson-filter`: pairs of 1D filters kept from the SVD, 1 to 4 (default: `4`).
    pub rank: u32,
    /// `multigrid`: `double-float` or `single` (default: `double-float`). MGPCG is always
    /// double-float; the other solvers always single (setting it to anything else is an error).
    pub precision: Option<Precision>,
}

impl Default for Pressure {
    fn default() -> Self {
        Pressure {
            solver: PressureSolver::Jacobi,
            iterations: 40,
            omega: None,
            warm_start: true,
            tolerance: None,
            rank: crate::grid::pressure::layout::MAX_RANK,
            precision: None,
        }
    }
}

impl PressureSolver {
    /// Iterations between residual checks when a tolerance is set: every V-cycle, every 5
    /// SOR iterations, every 10 Jacobi sweeps.
    pub(crate) fn check_every(self) -> u32 {
        match self {
            PressureSolver::Multigrid | PressureSolver::Mgpcg | PressureSolver::PoissonFilter => 1,
            PressureSolver::Sor => 5,
            PressureSolver::Jacobi | PressureSolver::JacobiMultisweep | PressureSolver::Relaxation => 10,
        }
    }
}

impl Pressure {
    /// The precision the solver keeps the pressure in: the one given, or the solver's
    /// (double-float for `multigrid` and `mgpcg`, single for the rest).
    pub fn precision(&self) -> Precision {
        match self.solver {
            PressureSolver::Multigrid => self.precision.unwrap_or(Precision::DoubleFloat),
            PressureSolver::Mgpcg => Precision::DoubleFloat,
            _ => Precision::Single,
        }
    }

    /// The ω the solver uses on a grid with the longer side `n` cells: the one given, or the
    /// solver's default.
    pub fn omega_for(&self, n: u32) -> f32 {
        self.omega.unwrap_or(match self.solver {
            PressureSolver::Jacobi | PressureSolver::JacobiMultisweep | PressureSolver::PoissonFilter => 0.9,
            PressureSolver::Multigrid | PressureSolver::Relaxation | PressureSolver::Mgpcg => 1.0,
            PressureSolver::Sor => {
                let optimum = 2.0 / (1.0 + (std::f64::consts::PI / f64::from(n.max(2))).sin());
                let smooth = 1.0 + 0.01f64.powf(1.0 / f64::from(self.iterations.max(1)));
                optimum.min(smooth) as f32
            }
        })
    }
}

impl Pressure {
    /// Check every value of the pressure solve; the error names the first bad key.
    pub(super) fn validate(&self) -> Result<()> {
        if self.iterations == 0 {
            return Err(Error::invalid("params.pressure.iterations", 0, "the projection needs at least one sweep"));
        }
        iterations("params.pressure.iterations", self.iterations)?;
        if let Some(omega) = self.omega {
            finite("params.pressure.omega", omega)?;
            match self.solver {
                PressureSolver::Jacobi | PressureSolver::JacobiMultisweep | PressureSolver::PoissonFilter
                    if !(omega > 0.0 && omega <= 1.0) =>
                {
                    return Err(Error::invalid(
                        "params.pressure.omega",
                        omega,
                        "weighted Jacobi converges for 0 < omega <= 1 (0.8-0.9 damps the checkerboard mode)",
                    ));
                }
                PressureSolver::Sor
                | PressureSolver::Multigrid
                | PressureSolver::Relaxation
                | PressureSolver::Mgpcg
                    if !(omega > 0.0 && omega < 2.0) =>
                {
                    return Err(Error::invalid(
                        "params.pressure.omega",
                        omega,
                        "SOR converges for 0 < omega < 2 (leave it out for the optimum)",
                    ));
                }
                _ => {}
            }
        }
        if self.solver == PressureSolver::PoissonFilter {
            let max = crate::grid::pressure::layout::MAX_SWEEPS;
            if self.iterations > max {
                return Err(Error::invalid(
                    "params.pressure.iterations",
                    self.iterations,
                    format!("the Poisson filter unrolls at most {max} sweeps"),
                ));
            }
            if !(1..=crate::grid::pressure::layout::MAX_RANK).contains(&self.rank) {
                return Err(Error::invalid(
                    "params.pressure.rank",
                    self.rank,
                    format!("between 1 and {}", crate::grid::pressure::layout::MAX_RANK),
                ));
            }
            if self.tolerance.is_some() {
                return Err(Error::invalid(
                    "params.pressure.tolerance",
                    "set",
                    "the Poisson filter is a fixed number of sweeps; it has no iterations to stop early",
                ));
            }
        } else if self.rank != crate::grid::pressure::layout::MAX_RANK {
            return Err(Error::invalid(
                "params.pressure.rank",
                self.rank,
                "only the poisson-filter solver has a rank; leave it out",
            ));
        }
        match (self.precision, self.solver) {
            (None, _)
            | (Some(_), PressureSolver::Multigrid)
            | (Some(Precision::DoubleFloat), PressureSolver::Mgpcg) => {}
            (Some(Precision::Single), PressureSolver::Mgpcg) => {
                return Err(Error::invalid(
                    "params.pressure.precision",
                    "single",
                    "MGPCG keeps its iterate in double-float (in f32 it stalls near 1e-4); leave it out",
                ));
            }
            (Some(p), _) => {
                return Err(Error::invalid(
                    "params.pressure.precision",
                    if p == Precision::Single { "single" } else { "double-float" },
                    "only `multigrid` has a choice (the other solvers work in f32, MGPCG in double-float); leave it out",
                ));
            }
        }
        if let Some(t) = self.tolerance {
            finite("params.pressure.tolerance", t)?;
            if !(t > 0.0 && t < 1.0) {
                return Err(Error::invalid(
                    "params.pressure.tolerance",
                    t,
                    "a relative residual between 0 and 1 (exclusive), e.g. 1e-4",
                ));
            }
        }
        Ok(())
    }
}
