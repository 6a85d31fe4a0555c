//! One scene at a list of grid sizes on a list of backends, one table (`fluid bench`).
//!
//! Each row: median milliseconds per step (the median of several timed batches, each ended by
//! waiting for the device), the host milliseconds of one step's call with the device idle (what
//! the API costs the calling thread), cells per second, effective bandwidth (the step's compulsory traffic,
//! [`swirly_core::grid::step::bytes_moved`], over its time) and its share of the device's measured
//! copy bandwidth, the per-kernel milliseconds where the backend measures them, and the parity
//! error against the CPU backend: the relative L2 difference ‖x − x_cpu‖ / ‖x_cpu‖ of the state
//! (u, v, density, temperature, dye; `pressure` for `--jacobi`) after `parity_steps` steps from
//! the scene's initial state, the CPU reference computed once per size.

use std::time::Instant;

use serde::Serialize;
use swirly_core::grid::step;
use swirly_core::params::PressureSolver;

use swirly::{FieldId, Result, Scene, Simulation, backend::Backend, backend::StepInputs};

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Scene (preset name or TOML file already loaded), resized per row.
    pub scene: Scene,
    /// Square grid sizes.
    pub sizes: Vec<u32>,
    /// Backend names.
    pub backends: Vec<String>,
    /// Timed steps per row (split into batches).
    pub steps: u32,
    /// Benchmark the Jacobi sweep alone instead of the scene's step.
    pub jacobi_only: bool,
    /// CPU threads (0: all cores).
    pub threads: usize,
    /// Steps of the parity check against the CPU backend (0: no check).
    pub parity_steps: u32,
}

/// One measured row.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    /// `cpu`, `wgpu`, …
    pub backend: String,
    /// Device or adapter.
    pub adapter: String,
    /// Scene name, or `jacobi-sweep`.
    pub scene: String,
    /// `[nx, ny]` (of the picture, for a particle scene).
    pub grid: [u32; 2],
    /// Particles, for a particle scene (a step is then one substep).
    pub particles: Option<u32>,
    /// Median milliseconds per step (per sweep for `jacobi-sweep`).
    pub ms_per_step: f64,
    /// Median milliseconds the calling thread spends in one step's call with the device idle
    /// (per sweep for `jacobi-sweep`): on a GPU the API's host cost (encoding, validation,
    /// submission), what a game's frame pays on the CPU; on the CPU backend the whole step.
    pub host_ms_per_step: f64,
    /// Median milliseconds from the call of one step to its results on the device, waited for
    /// (a frame that reads a field back every step pays this); per sweep for `jacobi-sweep`.
    pub waited_ms_per_step: f64,
    /// Cells per second (particles per second for a particle scene).
    pub cells_per_s: f64,
    /// Effective bandwidth, GB/s.
    pub gb_per_s: f64,
    /// Effective bandwidth over the device's measured copy bandwidth.
    pub bandwidth_share: Option<f64>,
    /// The device's copy bandwidth, GB/s.
    pub copy_gb_per_s: Option<f64>,
    /// Per-kernel milliseconds per step, where the backend measures them.
    pub kernels: Vec<(String, f64)>,
    /// Relative L2 difference from the CPU backend after the parity steps (`None`: not checked).
    pub parity_rel_l2: Option<f64>,
}

/// The scene on an `n × n` grid (as `--set grid.nx=n --set grid.ny=n` would give), checked.
pub fn resized(scene: &Scene, n: u32) -> Result<Scene> {
    let mut s = scene.clone();
    s.grid.nx = n;
    s.grid.ny = n;
    s.validate()?;
    Ok(s)
}

/// A particle scene filled with about `n` particles: the radius (and any fill spacing) scaled
/// by √(count / n), one substep a step (the paper's step, what a count is timed at), its dt
/// the scene's substep's scaled with the radius, so the liquid moves as many radii a step.
pub fn with_particles(scene: &Scene, n: u32) -> Result<Scene> {
    let count = scene.model()?.fields().iter().find(|f| f.name == "positions").map_or(0, |f| match f.lattice {
        swirly::model::Lattice::Points { count } => count,
        _ => 0,
    });
    let mut s = scene.clone();
    let Some(spec) = s.particles.as_mut() else {
        return Err(swirly::Error::invalid("--sizes", n, "particle counts are for a particle scene"));
    };
    if count == 0 {
        return Err(swirly::Error::invalid("particles.fill", 0, "the scene holds no particles to scale"));
    }
    let f = (f64::from(count) / f64::from(n)).sqrt() as f32;
    spec.radius *= f;
    for fill in &mut spec.fill {
        let (swirly_core::particles::spec::Fill::Box { spacing, .. }
        | swirly_core::particles::spec::Fill::Circle { spacing, .. }) = fill;
        if let Some(sp) = spacing {
            *sp *= f;
        }
    }
    s.params.dt *= f / spec.substeps as f32;
    spec.substeps = 1;
    s.model()?;
    Ok(s)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median host milliseconds of one call of `f` with the device idle when it starts, over
/// `samples` calls.
fn host_ms(sim: &mut Simulation, samples: u32, mut f: impl FnMut(&mut Simulation) -> Result<()>) -> Result<f64> {
    let mut times = Vec::new();
    for _ in 0..samples {
        sim.backend_mut().finish()?;
        let t0 = Instant::now();
        f(sim)?;
        times.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    sim.backend_mut().finish()?;
    Ok(median(times))
}

/// Median milliseconds per call of `f`, over `batches` batches of `per_batch` calls, waiting
/// for the device before and after each batch.
fn time_batches(
    sim: &mut Simulation,
    batches: u32,
    per_batch: u32,
    mut f: impl FnMut(&mut Simulation) -> Result<()>,
) -> Result<f64> {
    let mut samples = Vec::new();
    for _ in 0..batches {
        sim.backend_mut().finish()?;
        let t0 = Instant::now();
        for _ in 0..per_batch {
            f(sim)?;
        }
        sim.backend_mut().finish()?;
        samples.push(t0.elapsed().as_secs_f64() * 1e3 / f64::from(per_batch));
    }
    Ok(median(samples))
}

/// Whether the scene's model moves points (particles), so that a benchmark size is a count of
/// them and its state is their positions and velocities, not an `n × n` grid.
fn moves_points(scene: &Scene) -> Result<bool> {
    Ok(scene.model()?.fields().iter().any(|f| matches!(f.lattice, swirly::model::Lattice::Points { .. })))
}

/// The scene at `n × n`; for `--jacobi`, with the sweep solver as its own, so that it holds
/// the pressure's ping-pong partner the sweeps swap with.
fn bench_scene(cfg: &BenchConfig, n: u32) -> Result<Scene> {
    if moves_points(&cfg.scene)? {
        if cfg.jacobi_only {
            return Err(swirly::Error::invalid("--jacobi", "on", "a particle scene has no pressure solve to time"));
        }
        return with_particles(&cfg.scene, n);
    }
    let mut scene = resized(&cfg.scene, n)?;
    if cfg.jacobi_only {
        scene.params.pressure.solver = sweep_solver(scene.params.pressure.solver);
    }
    Ok(scene)
}

fn bench_one(cfg: &BenchConfig, backend: Box<dyn Backend>, n: u32, copy: Option<f64>) -> Result<BenchRow> {
    let scene = bench_scene(cfg, n)?;
    let grid = scene.grid()?;
    let dt = scene.params.dt;
    let batches = 5u32;
    let per_batch = cfg.steps.div_ceil(batches).max(1);
    let mut sim = Simulation::new(scene.clone(), backend)?;
    let adapter = sim.backend_mut().device();
    let backend_name = sim.backend_mut().name().to_string();
    let host_samples = 11;
    let (name, bytes, ms, host, waited, kernels) = if cfg.jacobi_only {
        let sweeps = 100;
        let pr = &scene.params.pressure;
        let schedule = step::jacobi_sweeps(&grid, sweep_solver(pr.solver), pr.omega, sweeps);
        let inputs = StepInputs { dt, ..StepInputs::default() };
        // Non-zero data so nothing is trivially cheap.
        let ramp: Vec<f32> = (0..grid.cells()).map(|k| (k % 97) as f32 * 0.01).collect();
        sim.set_field(FieldId::Divergence, &ramp)?;
        let run = |s: &mut Simulation| s.backend_mut().run(&schedule, &inputs);
        let ms = time_batches(&mut sim, batches, 1, run)? / f64::from(sweeps);
        let host = host_ms(&mut sim, host_samples, run)? / f64::from(sweeps);
        let waited = time_batches(&mut sim, host_samples, 1, run)? / f64::from(sweeps);
        let kernels = timed_kernels(&mut sim, run, f64::from(sweeps))?;
        ("jacobi-sweep".to_string(), step::bytes_moved(&schedule, &grid) / u64::from(sweeps), ms, host, waited, kernels)
    } else {
        for _ in 0..3 {
            sim.step(dt)?;
        }
        let ms = time_batches(&mut sim, batches, per_batch, |s| s.step(dt))?;
        let host = host_ms(&mut sim, host_samples, |s| s.step(dt))?;
        let waited = time_batches(&mut sim, host_samples, 1, |s| s.step(dt))?;
        let kernels = timed_kernels(&mut sim, |s| s.step(dt), 1.0)?;
        let bytes = scene.model()?.bytes_per_step();
        (scene.name.clone(), bytes, ms, host, waited, kernels)
    };
    let gb = bytes as f64 / (ms * 1e-3) / 1e9;
    let particles = sim.field_info("positions").ok().map(|f| f.lattice.points(&grid) as u32);
    let per_s = f64::from(particles.unwrap_or(0)).max(grid.cells() as f64 * f64::from(particles.is_none()));
    Ok(BenchRow {
        backend: backend_name,
        adapter,
        scene: name,
        grid: [grid.nx, grid.ny],
        particles,
        ms_per_step: ms,
        host_ms_per_step: host,
        waited_ms_per_step: waited,
        cells_per_s: per_s / (ms * 1e-3),
        gb_per_s: gb,
        bandwidth_share: copy.map(|c| gb / c),
        copy_gb_per_s: copy,
        kernels,
        parity_rel_l2: None,
    })
}

/// The fields the parity check compares.
fn parity_fields(cfg: &BenchConfig) -> Result<&'static [&'static str]> {
    Ok(if cfg.jacobi_only {
        &["pressure"]
    } else if moves_points(&cfg.scene)? {
        &["positions", "velocities"]
    } else {
        &["u", "v", "density", "temperature", "dye"]
    })
}

/// The state after the parity steps on `backend`, fields concatenated.
fn parity_state(cfg: &BenchConfig, backend: Box<dyn Backend>, n: u32) -> Result<Vec<f32>> {
    let scene = bench_scene(cfg, n)?;
    let grid = scene.grid()?;
    let dt = scene.params.dt;
    let mut sim = Simulation::new(scene.clone(), backend)?;
    if cfg.jacobi_only {
        let pr = &scene.params.pressure;
        let schedule = step::jacobi_sweeps(&grid, sweep_solver(pr.solver), pr.omega, cfg.parity_steps);
        let ramp: Vec<f32> = (0..grid.cells()).map(|k| (k % 97) as f32 * 0.01).collect();
        sim.set_field(FieldId::Divergence, &ramp)?;
        sim.backend_mut().run(&schedule, &StepInputs { dt, ..StepInputs::default() })?;
    } else {
        for _ in 0..cfg.parity_steps {
            sim.step(dt)?;
        }
    }
    let mut out = Vec::new();
    // The fields the scene carries (one it switches off holds nothing to compare).
    for f in parity_fields(cfg)? {
        if sim.carries(*f) {
            out.extend(sim.field(*f)?);
        }
    }
    Ok(out)
}

/// ‖a − b‖ / ‖b‖ in f64 (0 when both are zero).
pub fn rel_l2(a: &[f32], b: &[f32]) -> f64 {
    let (mut d, mut r) = (0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        d += (f64::from(*x) - f64::from(*y)).powi(2);
        r += f64::from(*y).powi(2);
    }
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    if r == 0.0 { if d == 0.0 { 0.0 } else { f64::INFINITY } } else { (d / r).sqrt() }
}

/// Per-kernel ms per call of `f` over a few timed calls; empty where the backend cannot time.
fn timed_kernels(
    sim: &mut Simulation,
    mut f: impl FnMut(&mut Simulation) -> Result<()>,
    per_call: f64,
) -> Result<Vec<(String, f64)>> {
    if sim.backend_mut().set_timing(true).is_err() {
        return Ok(Vec::new());
    }
    let calls = 3;
    for _ in 0..calls {
        f(sim)?;
    }
    sim.backend_mut().finish()?;
    let t = sim.backend_mut().take_timings()?;
    sim.backend_mut().set_timing(false)?;
    Ok(t.into_iter().map(|k| (k.label, k.ms / f64::from(calls) / per_call)).collect())
}

/// Run the benchmark, rows in backend-major order, handing each row to `emit` as soon as it is
/// measured, so that a failure at a later size or backend (a grid too large for the device)
/// leaves the rows before it usable.
pub fn run_each(cfg: &BenchConfig, mut progress: impl FnMut(&str), mut emit: impl FnMut(BenchRow)) -> Result<()> {
    // Every name before any work, so a typo in the last one does not waste the others' runs.
    for name in &cfg.backends {
        swirly::backend::check_backend_name(name)?;
    }
    for &n in &cfg.sizes {
        bench_scene(cfg, n)?;
    }
    let mut reference: std::collections::HashMap<u32, Vec<f32>> = std::collections::HashMap::new();
    for name in &cfg.backends {
        let mut probe = swirly::backend_with_threads(name, cfg.threads)?;
        progress(&format!("{name}: measuring copy bandwidth"));
        let copy = probe.copy_bandwidth().ok();
        drop(probe);
        for &n in &cfg.sizes {
            let what = if moves_points(&cfg.scene)? { format!("{n} particles") } else { format!("{n}x{n}") };
            progress(&format!("{name}: {what}"));
            let backend = swirly::backend_with_threads(name, cfg.threads)?;
            let mut row = bench_one(cfg, backend, n, copy)?;
            if cfg.parity_steps > 0 {
                progress(&format!("{name}: {what}: parity with cpu over {} steps", cfg.parity_steps));
                let expected = match reference.entry(n) {
                    std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert(parity_state(cfg, swirly::backend_with_threads("cpu", cfg.threads)?, n)?)
                    }
                };
                let state = parity_state(cfg, swirly::backend_with_threads(name, cfg.threads)?, n)?;
                row.parity_rel_l2 = Some(rel_l2(&state, expected));
            }
            emit(row);
        }
    }
    Ok(())
}

/// The rows as a text table.
pub fn table(rows: &[BenchRow]) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{:<7} {:<34} {:<14} {:>11} {:>11} {:>9} {:>10} {:>10} {:>8} {:>8} {:>9}  top kernels (ms)\n",
        "backend", "adapter", "scene", "grid", "ms/step", "host ms", "waited ms", "M/s", "GB/s", "of copy", "vs cpu"
    ));
    for r in rows {
        let mut k = r.kernels.clone();
        k.sort_by(|a, b| b.1.total_cmp(&a.1));
        let top: Vec<String> =
            k.iter().take(3).map(|(l, ms)| format!("{} {ms:.3}", l.trim_start_matches("fluid."))).collect();
        let adapter: String = r.adapter.chars().take(34).collect();
        out.push_str(&format!(
            "{:<7} {:<34} {:<14} {:>11} {:>11.4} {:>9.4} {:>10.4} {:>10.1} {:>8.1} {:>8} {:>9}  {}\n",
            r.backend,
            adapter,
            r.scene,
            r.particles.map_or_else(|| format!("{}x{}", r.grid[0], r.grid[1]), |n| format!("{n} p")),
            r.ms_per_step,
            r.host_ms_per_step,
            r.waited_ms_per_step,
            r.cells_per_s / 1e6,
            r.gb_per_s,
            r.bandwidth_share.map(|s| format!("{:.0} %", s * 100.0)).unwrap_or_else(|| "-".into()),
            r.parity_rel_l2.map(|p| format!("{p:.1e}")).unwrap_or_else(|| "-".into()),
            top.join(", ")
        ));
    }
    let mut seen = Vec::new();
    for r in rows {
        if let Some(c) = r.copy_gb_per_s
            && !seen.contains(&r.backend)
        {
            out.push_str(&format!("copy bandwidth of {} ({}): {c:.0} GB/s\n", r.backend, r.adapter));
            seen.push(r.backend.clone());
        }
    }
    out.push_str(
        "host ms: the calling thread's time in one step's call with the device idle (the whole step on the CPU)\n",
    );
    out.push_str("waited ms: one step from its call until its results are done on the device (steps not overlapped)\n");
    out.push_str("vs cpu: relative L2 difference of the state from the CPU backend's after the parity steps\n");
    out.push_str("M/s: millions of cells (or particles, `p`) per second; a particle scene's step is one substep\n");
    out
}

/// The solver `--jacobi` times: the fused `jacobi-multisweep` when the scene asks for it,
/// otherwise plain `jacobi` (whatever other solver the scene uses for its step).
fn sweep_solver(scene_solver: PressureSolver) -> PressureSolver {
    if scene_solver == PressureSolver::JacobiMultisweep { scene_solver } else { PressureSolver::Jacobi }
}
