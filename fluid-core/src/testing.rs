//! Fixtures that the tests of several crates share: `cfg(test)` here, feature `testing` for
//! the others (a dev-dependency turns it on).

use crate::grid::params::{Precision, PressureSolver};
use crate::grid::{Boundary, Grid, GridFields, step};
use crate::scene::Scene;
use swirly_ir::lower::{Plan, Target, lower};
use swirly_ir::resource::owners;

/// The plans of every preset's step (whole, and split around solves that stop at a
/// tolerance), with each pressure solver and precision, on wall, periodic and mixed grids,
/// with viscosity, and every other schedule the grid model runs, each on the resources the
/// scene declares, lowered for `target`: (what it is, the plan).
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
                let start = owners(fields.resources());
                let (before, after) = step::step_split(&grid, &params);
                for (kind, schedule) in [
                    ("step", step::step(&grid, &params)),
                    ("step before its solve", before),
                    ("solve, warm", step::solve(&grid, &params.pressure, 3, true)),
                    ("solve, cold", step::solve(&grid, &params.pressure, 2, false)),
                    ("step after its solve", after),
                    ("setup", step::setup(&grid, &params)),
                    ("initialize", step::initialize(&grid, &params)),
                    ("diagnostics", step::diagnostics(&grid)),
                    ("state check", step::state_check(&grid)),
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

/// The checkpoint `file` with its header replaced by `text` and its checksum made to match, so
/// that only the checks behind the checksum can catch what `text` says; `None` when `file` is
/// shorter than its own header length says.
pub fn with_header(file: &[u8], text: &str) -> Option<Vec<u8>> {
    use crate::checkpoint::MAGIC;
    // The magic, the version, the header's length.
    let lead = MAGIC.len() + 4;
    let len_bytes = file.get(lead..lead + 4)?;
    let old = u32::from_le_bytes(len_bytes.try_into().ok()?) as usize;
    let payload = file.get(lead + 4 + old..file.len().checked_sub(8)?)?;
    let mut out = file[..lead].to_vec();
    out.extend(u32::try_from(text.len()).ok()?.to_le_bytes());
    out.extend(text.as_bytes());
    out.extend(payload);
    let sum = xxhash_rust::xxh3::xxh3_64(&out);
    out.extend(sum.to_le_bytes());
    Some(out)
}
