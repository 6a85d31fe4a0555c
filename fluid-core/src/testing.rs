//! Fixtures that the tests of several crates share: `cfg(test)` here, feature `testing` for
//! the others (a dev-dependency turns it on).

use crate::Scene;
use crate::grid::{Boundary, Grid, GridFields, step};
use crate::ir::lower::{Plan, Target, lower};
use crate::params::{Precision, PressureSolver};

/// The plans of every preset's step, with each pressure solver and precision, on wall,
/// periodic and mixed grids, with viscosity, and the setup, diagnostics, curl and residual
/// schedules of each, lowered for `target`: (what it is, the plan).
pub fn every_plan(target: &Target) -> Vec<(String, Plan)> {
    let solvers = [
        (PressureSolver::Jacobi, None),
        (PressureSolver::JacobiMultisweep, None),
        (PressureSolver::Sor, None),
        (PressureSolver::Relaxation, None),
        (PressureSolver::Multigrid, Some(Precision::DoubleFloat)),
        (PressureSolver::Multigrid, Some(Precision::Single)),
        (PressureSolver::Mgpcg, None),
        (PressureSolver::PoissonFilter, None),
    ];
    let mut plans = Vec::new();
    for name in ["smoke", "ink", "taylor-green", "stable-fluid"] {
        let scene = Scene::preset(name).expect("preset");
        for (bx, by) in [
            (Boundary::Wall, Boundary::Wall),
            (Boundary::Periodic, Boundary::Periodic),
            (Boundary::Wall, Boundary::Periodic),
        ] {
            let grid = Grid::new(37, 22, 0.1, bx, by).expect("grid");
            for (solver, precision) in solvers {
                let mut params = scene.params.clone();
                (params.boundary.x, params.boundary.y) = (bx, by);
                params.pressure.solver = solver;
                params.pressure.precision = precision;
                params.pressure.iterations = params.pressure.iterations.min(8);
                params.viscosity = 0.01;
                let fields = GridFields::declare(&grid, &params);
                let start: Vec<usize> = (0..fields.resources().len()).collect();
                for (kind, schedule) in [
                    ("step", step::step(&grid, &params)),
                    ("setup", step::setup(&grid, &params)),
                    ("diagnostics", step::diagnostics(&grid)),
                    ("curl", step::curl(&grid)),
                    ("residual", step::residual(&grid)),
                ] {
                    let plan = lower(&schedule, fields.resources(), &start, target).expect("lowered");
                    plans.push((format!("{name}'s {kind}, {solver:?}, {bx:?}/{by:?}"), plan));
                }
            }
        }
    }
    plans
}
