//! `fluid bench solvers`: for each backend, grid and pressure solver, the iterations and time a
//! cold-started solve needs to reach relative residuals 1e-2, 1e-4 and 1e-6, and the residual it
//! reaches within a fixed time budget.
//!
//! The problem is the same everywhere: the divergence of a random velocity in a walled `n × n`
//! box (a large-scale part, a random 9 × 9 lattice interpolated bilinearly, plus ±0.1 uniform
//! noise; seed 5; zero on the walls), solved from p = 0. The residual is
//! ‖b − A p‖ / ‖b‖ (the engine's `residual` kernel and reductions, in f32). Iterations to a
//! target are found by doubling, then bisection; each count's time is the median of three timed
//! solves, each ended by waiting for the device. A target is "not reached" when the iterations
//! needed exceed the solver's cap (Jacobi and SOR: 2^14, multigrid: 64 V-cycles) or the f32
//! floor of the residual stops the descent.
//!
//! With a scene (`--scene`), the box takes its sides and obstacles at each size (`n × n`, as
//! `fluid bench` resizes it): the solve runs round the solids, weighted by their faces.

use std::time::Instant;

use serde::Serialize;
use swirly_core::grid::step::{self, SLOT_RESIDUAL_SQ, SLOT_RHS_SQ};
use swirly_core::params::{Precision, Pressure, PressureSolver};
use swirly_core::{GridFields, Schedule};

use swirly::{Boundary, Error, FieldId, Result, Scene, backend::Backend, backend::StepInputs, model::Grid};

/// What to measure.
#[derive(Clone, Debug)]
pub struct SolverBenchConfig {
    /// Square grid sizes.
    pub sizes: Vec<u32>,
    /// Backend names.
    pub backends: Vec<String>,
    /// Solvers.
    pub solvers: Vec<PressureSolver>,
    /// Relative residuals to reach.
    pub targets: Vec<f64>,
    /// The fixed time budget, milliseconds.
    pub budget_ms: f64,
    /// CPU threads (0: all cores).
    pub threads: usize,
    /// `multigrid`'s precision (`None`: its default, double-float); the other solvers have none
    /// to choose.
    pub precision: Option<Precision>,
    /// A scene whose sides and obstacles the box takes (`None`: a walled empty box).
    pub scene: Option<Scene>,
}

impl Default for SolverBenchConfig {
    fn default() -> Self {
        SolverBenchConfig {
            sizes: vec![128, 256, 512, 1024],
            backends: vec!["cpu".into()],
            solvers: vec![PressureSolver::Jacobi, PressureSolver::Sor, PressureSolver::Multigrid],
            targets: vec![1e-2, 1e-4, 1e-6],
            budget_ms: 2.0,
            threads: 0,
            precision: None,
            scene: None,
        }
    }
}

/// Reaching one target.
#[derive(Clone, Debug, Serialize)]
pub struct Reached {
    /// The relative residual asked for.
    pub target: f64,
    /// Iterations needed (sweeps, SOR iterations, V-cycles); `None`: not reached.
    pub iterations: Option<u32>,
    /// Median milliseconds of a solve with that many iterations.
    pub ms: Option<f64>,
}

/// One measured row.
#[derive(Clone, Debug, Serialize)]
pub struct SolverRow {
    /// Backend name.
    pub backend: String,
    /// Device or adapter.
    pub adapter: String,
    /// `[nx, ny]`.
    pub grid: [u32; 2],
    /// `jacobi`, `sor`, `multigrid`, ….
    pub solver: String,
    /// One entry per target.
    pub reached: Vec<Reached>,
    /// The time budget, milliseconds.
    pub budget_ms: f64,
    /// Iterations that fit in the budget (from the measured time per iteration), at most the
    /// largest count tried: 16384 sweeps or SOR iterations, 64 V-cycles or MGPCG iterations,
    /// the Poisson filter's 32 sweeps.
    pub budget_iterations: u32,
    /// The budget holds more iterations than that largest count: `budget_iterations` and
    /// `budget_residual` are the count's, not the budget's.
    pub budget_capped: bool,
    /// Relative residual after those iterations (1 when none fit).
    pub budget_residual: f64,
}

/// The largest iteration count tried per solver.
fn cap(solver: PressureSolver) -> u32 {
    match solver {
        PressureSolver::Multigrid | PressureSolver::Mgpcg => 64,
        PressureSolver::PoissonFilter => swirly_core::grid::pressure::poisson_filter::MAX_SWEEPS,
        _ => 1 << 14,
    }
}

/// The solver's name as in scene files.
pub fn solver_name(solver: PressureSolver) -> &'static str {
    match solver {
        PressureSolver::Jacobi => "jacobi",
        PressureSolver::JacobiMultisweep => "jacobi-multisweep",
        PressureSolver::Sor => "sor",
        PressureSolver::Multigrid => "multigrid",
        PressureSolver::Relaxation => "relaxation",
        PressureSolver::Mgpcg => "mgpcg",
        PressureSolver::PoissonFilter => "poisson-filter",
    }
}

/// Parse a solver name.
pub fn parse_solver(name: &str) -> Result<PressureSolver> {
    [
        PressureSolver::Jacobi,
        PressureSolver::JacobiMultisweep,
        PressureSolver::Sor,
        PressureSolver::Multigrid,
        PressureSolver::Relaxation,
        PressureSolver::Mgpcg,
        PressureSolver::PoissonFilter,
    ]
    .into_iter()
    .find(|s| solver_name(*s) == name)
    .ok_or_else(|| {
        Error::invalid(
            "--solvers",
            name,
            "known solvers: jacobi, jacobi-multisweep, sor, multigrid, mgpcg, poisson-filter, relaxation",
        )
    })
}

/// A backend holding the problem: `b` in `divergence`, ready for cold solves.
struct Problem {
    backend: Box<dyn Backend>,
    grid: Grid,
    inputs: StepInputs,
    velocity: (Vec<f32>, Vec<f32>),
    /// `multigrid`'s precision.
    precision: Option<Precision>,
}

impl Problem {
    /// The precision setting a solve of `solver` uses.
    fn precision(&self, solver: PressureSolver) -> Option<Precision> {
        if solver == PressureSolver::Multigrid { self.precision } else { None }
    }

    fn new(
        mut backend: Box<dyn Backend>,
        n: u32,
        precision: Option<Precision>,
        scene: Option<&Scene>,
    ) -> Result<Problem> {
        let inputs = StepInputs { dt: 1.0 / 60.0, ..StepInputs::default() };
        let grid = match scene {
            None => {
                let grid = Grid::new(n, n, 1.0 / n as f32, Boundary::Wall, Boundary::Wall)?;
                backend.allocate(GridFields::all(&grid).resources())?;
                grid
            }
            Some(scene) => {
                let scene = crate::scenes::resized(scene, n)?;
                let (grid, obstacles) = (scene.grid()?, scene.obstacles()?);
                backend.allocate(GridFields::all_with(&grid, &obstacles).resources())?;
                if !obstacles.is_empty() {
                    let rows = swirly_core::frame::solid::table(&obstacles);
                    let bytes: Vec<u8> = rows.iter().flatten().flat_map(|x| x.to_ne_bytes()).collect();
                    backend.write(FieldId::Obstacles.into(), &bytes)?;
                    // The faces round the solids, on every multigrid level.
                    let mut params = scene.params.clone();
                    params.pressure.solver = PressureSolver::Multigrid;
                    backend.run(&step::solids(&grid, &params), &inputs)?;
                }
                grid
            }
        };
        let mut rng = swirly_core::scene::SplitMix64(5);
        let (nx, ny) = (n as usize, n as usize);
        // Large-scale flow (a random 9 x 9 lattice, bilinearly interpolated) plus 10 % noise: the
        // divergence has smooth and rough parts, as a simulation's does.
        let smooth = |rng: &mut swirly_core::scene::SplitMix64| {
            let lattice: Vec<f32> = (0..81).map(|_| 2.0 * rng.next_f32() - 1.0).collect();
            move |x: f32, y: f32| {
                let (fx, fy) = ((x * 8.0).clamp(0.0, 7.999), (y * 8.0).clamp(0.0, 7.999));
                let (i, j) = (fx as usize, fy as usize);
                let (tx, ty) = (fx - i as f32, fy - j as f32);
                let at = |a: usize, b: usize| lattice[b * 9 + a];
                (1.0 - ty) * ((1.0 - tx) * at(i, j) + tx * at(i + 1, j))
                    + ty * ((1.0 - tx) * at(i, j + 1) + tx * at(i + 1, j + 1))
            }
        };
        let su = smooth(&mut rng);
        let sv = smooth(&mut rng);
        let nf = n as f32;
        let mut u: Vec<f32> = (0..grid.len(FieldId::U))
            .map(|k| su((k % (nx + 1)) as f32 / nf, ((k / (nx + 1)) as f32 + 0.5) / nf) + 0.2 * rng.next_f32() - 0.1)
            .collect();
        let mut v: Vec<f32> = (0..grid.len(FieldId::V))
            .map(|k| sv(((k % nx) as f32 + 0.5) / nf, (k / nx) as f32 / nf) + 0.2 * rng.next_f32() - 0.1)
            .collect();
        for j in 0..ny {
            u[j * (nx + 1)] = 0.0;
            u[j * (nx + 1) + nx] = 0.0;
        }
        v[..nx].fill(0.0);
        v[ny * nx..].fill(0.0);
        backend.upload(FieldId::U.into(), &u)?;
        backend.upload(FieldId::V.into(), &v)?;
        let mut divergence = Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]);
        let ids = [FieldId::U, FieldId::V, FieldId::UFaces, FieldId::VFaces, FieldId::Divergence]
            .map(swirly::backend::ResourceId::from);
        divergence.dispatch(swirly_core::grid::kernels::DIVERGENCE, &ids, None, [grid.nx, grid.ny]);
        backend.run(&divergence.build(), &inputs)?;
        Ok(Problem { backend, grid, inputs, velocity: (u, v), precision })
    }

    /// The relaxation corrects the velocity itself: give it the original one back.
    fn prepare(&mut self, solver: PressureSolver, iterations: u32) -> Result<()> {
        if solver == PressureSolver::PoissonFilter {
            // The filter's taps depend on the sweeps it unrolls.
            let params = swirly::SimParams {
                pressure: Pressure { solver, iterations, precision: self.precision(solver), ..Pressure::default() },
                ..Default::default()
            };
            self.backend.run(&step::setup(&self.grid, &params), &self.inputs)?;
        }
        if solver == PressureSolver::Relaxation {
            self.backend.upload(FieldId::U.into(), &self.velocity.0)?;
            self.backend.upload(FieldId::V.into(), &self.velocity.1)?;
        }
        Ok(())
    }

    fn solve(&mut self, solver: PressureSolver, iterations: u32) -> Result<()> {
        let pr = Pressure { solver, iterations, precision: self.precision(solver), ..Pressure::default() };
        self.backend.run(&step::solve(&self.grid, &pr, iterations, false), &self.inputs)
    }

    /// Relative residual after a cold solve of `iterations`.
    fn residual(&mut self, solver: PressureSolver, iterations: u32) -> Result<f64> {
        self.prepare(solver, iterations)?;
        self.solve(solver, iterations)?;
        self.backend.run(&step::residual(&self.grid), &self.inputs)?;
        let r = self.backend.reductions()?;
        let rhs = r[SLOT_RHS_SQ].sqrt();
        Ok(if rhs > 0.0 { r[SLOT_RESIDUAL_SQ].sqrt() / rhs } else { 0.0 })
    }

    /// Median milliseconds of a cold solve of `iterations`.
    fn time(&mut self, solver: PressureSolver, iterations: u32) -> Result<f64> {
        let mut samples = Vec::new();
        for _ in 0..3 {
            self.prepare(solver, iterations)?;
            self.backend.finish()?;
            let t0 = Instant::now();
            self.solve(solver, iterations)?;
            self.backend.finish()?;
            samples.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        samples.sort_by(f64::total_cmp);
        Ok(samples[1])
    }

    /// The fewest iterations reaching `target`, by doubling from `from` and bisecting; `None`
    /// beyond the cap or when a probe's solve takes longer than `max_ms`.
    fn iterations_to(&mut self, solver: PressureSolver, target: f64, from: u32, max_ms: f64) -> Result<Option<u32>> {
        let mut lo = from.max(1) - 1; // known (or assumed) not to reach
        let mut hi = from.max(1);
        loop {
            let t0 = Instant::now();
            let r = self.residual(solver, hi)?;
            if r <= target {
                break;
            }
            if hi >= cap(solver) || t0.elapsed().as_secs_f64() * 1e3 > max_ms {
                return Ok(None);
            }
            lo = hi;
            hi = (hi * 2).min(cap(solver));
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.residual(solver, mid)? <= target {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Ok(Some(hi))
    }
}

/// Run the solver benchmark; rows in backend, size, solver order.
pub fn run(cfg: &SolverBenchConfig, mut progress: impl FnMut(&str)) -> Result<Vec<SolverRow>> {
    for name in &cfg.backends {
        swirly::backend::check_backend_name(name)?;
    }
    // A solver that cannot honour the scene's obstacles or sides is refused up front, by name.
    if let Some(scene) = &cfg.scene {
        for &solver in &cfg.solvers {
            let mut s = scene.clone();
            s.params.pressure.solver = solver;
            s.validate()?;
        }
    }
    let mut rows = Vec::new();
    for name in &cfg.backends {
        for &n in &cfg.sizes {
            let backend = swirly::backend_with_threads(name, cfg.threads)?;
            let mut problem = Problem::new(backend, n, cfg.precision, cfg.scene.as_ref())?;
            let adapter = problem.backend.device();
            for &solver in &cfg.solvers {
                progress(&format!("{name}: {n}x{n}: {}", solver_name(solver)));
                let mut reached = Vec::new();
                let mut from = 1;
                let mut gave_up = false;
                for &target in &cfg.targets {
                    let k = if gave_up { None } else { problem.iterations_to(solver, target, from, 5_000.0)? };
                    gave_up |= k.is_none();
                    let ms = match k {
                        Some(k) => Some(problem.time(solver, k)?),
                        None => None,
                    };
                    if let Some(k) = k {
                        from = k;
                    }
                    reached.push(Reached { target, iterations: k, ms });
                }
                // Time per iteration from a mid-sized solve, then the residual within the budget.
                let probe = from.clamp(4, 256).min(cap(solver));
                let per_iteration = problem.time(solver, probe)? / f64::from(probe);
                let fit = (cfg.budget_ms / per_iteration).floor();
                let budget_capped = fit > f64::from(cap(solver));
                let budget_iterations = if budget_capped { cap(solver) } else { fit as u32 };
                let budget_residual =
                    if budget_iterations == 0 { 1.0 } else { problem.residual(solver, budget_iterations)? };
                rows.push(SolverRow {
                    backend: name.clone(),
                    adapter: adapter.clone(),
                    grid: [problem.grid.nx, problem.grid.ny],
                    solver: match problem.precision(solver) {
                        Some(Precision::Single) => format!("{} (single)", solver_name(solver)),
                        _ => solver_name(solver).into(),
                    },
                    reached,
                    budget_ms: cfg.budget_ms,
                    budget_iterations,
                    budget_capped,
                    budget_residual,
                });
            }
        }
    }
    Ok(rows)
}

/// The rows as a text table.
pub fn table(rows: &[SolverRow]) -> String {
    let mut out = String::new();
    let targets: Vec<f64> = rows.first().map(|r| r.reached.iter().map(|x| x.target).collect()).unwrap_or_default();
    out.push_str(&format!("{:<7} {:<26} {:>11} {:<18}", "backend", "adapter", "grid", "solver"));
    for t in &targets {
        out.push_str(&format!(" {:>18}", format!("to {t:.0e}: it, ms")));
    }
    out.push_str(&format!(" {:>22}\n", "in budget: it, residual"));
    for r in rows {
        let adapter: String = r.adapter.chars().take(26).collect();
        out.push_str(&format!(
            "{:<7} {:<26} {:>11} {:<18}",
            r.backend,
            adapter,
            format!("{}x{}", r.grid[0], r.grid[1]),
            r.solver
        ));
        for x in &r.reached {
            let cell = match (x.iterations, x.ms) {
                (Some(k), Some(ms)) => format!("{k}, {ms:.3}"),
                _ => "not reached".into(),
            };
            out.push_str(&format!(" {cell:>18}"));
        }
        let capped = if r.budget_capped { " (cap)" } else { "" };
        out.push_str(&format!(" {:>22}\n", format!("{}{capped}, {:.2e}", r.budget_iterations, r.budget_residual)));
    }
    if let Some(r) = rows.first() {
        out.push_str(&format!(
            "budget: {} ms per solve; iterations = sweeps (jacobi), red+black pairs (sor), V-cycles (multigrid)\n",
            r.budget_ms
        ));
        if rows.iter().any(|r| r.budget_capped) {
            out.push_str(
                "(cap): the budget holds more iterations than the most tried (16384; 64 V-cycles or MGPCG \
                 iterations; the Poisson filter's 32 sweeps); the row gives those\n",
            );
        }
    }
    out
}
