//! # fluid
//!
//! Real-time 2D fluids (smoke and ink) for games and visual effects, on the CPU (rayon) or
//! the GPU. This is the crate integrators depend on:
//!
//! ```
//! use fluid::{Simulation, Scene, Splat, Falloff, FieldId};
//!
//! # fn main() -> fluid::Result<()> {
//! let scene = Scene::preset("smoke")?;
//! let mut sim = Simulation::new(scene, fluid::backend("cpu")?)?;
//! sim.splat(Splat { center: [0.3, 0.2], radius: 0.05, falloff: Falloff::Gaussian,
//!                   velocity: [1.0, 0.0], density: 1.0, ..Splat::default() })?;
//! for _ in 0..60 {
//!     sim.step(1.0 / 60.0)?;
//! }
//! // Tune while it runs: from the next step on, with the state kept.
//! let mut params = sim.scene().params.clone();
//! params.vorticity = 12.0;
//! sim.set_params(params)?;
//! sim.step(1.0 / 60.0)?;
//! let density = sim.field(FieldId::Density)?; // [ny, nx], row 0 at the bottom
//! let here = sim.sample(FieldId::Density, &[[0.4, 0.5]])?; // at world positions
//! sim.reset()?; // back to the scene's initial state
//! # let _ = (density, here); Ok(()) }
//! ```
//!
//! Backends are Cargo features: `cpu` (default), `wgpu`, `vulkan`.

pub use fluid_core::grid::SamplePlan;
pub use fluid_core::params::{
    ActiveFields, Advection, AdvectionScheme, Backtrace, Boundaries, Buoyancy, Dissipation, Interpolation, Precision,
    Pressure, PressureSolver,
};
pub use fluid_core::render::{RenderField, RenderSpec};
pub use fluid_core::scene::{GridSpec, Initial, InitialVelocity, PRESETS, SplatSpec, parse_override};
pub use fluid_core::{
    Backend, Boundary, Error, Falloff, FieldId, Grid, KernelTiming, PendingRead, Result, Scene, Schedule, SimParams,
    Splat, StepInputs,
};
#[cfg(feature = "cpu")]
pub use fluid_cpu::CpuBackend;
/// The Vulkan backend's crate: its device and buffer types ([`fluid_vulkan::RawDevice`],
/// [`fluid_vulkan::FieldBuffer`]) and the `ash` it is built on.
#[cfg(feature = "vulkan")]
pub use fluid_vulkan;
#[cfg(feature = "vulkan")]
pub use fluid_vulkan::{DeviceSummary, QueueChoice, VulkanBackend};
/// The wgpu backend's crate, with the `wgpu` it is built on (for
/// [`WgpuBackend::from_device`]).
#[cfg(feature = "wgpu")]
pub use fluid_wgpu;
#[cfg(feature = "wgpu")]
pub use fluid_wgpu::{AdapterSummary, WgpuBackend};

use fluid_core::schedule::{SLOT_MAX_DIVERGENCE, SLOT_RESIDUAL_SQ, SLOT_RHS_SQ, SLOT_STATE_MAX, STATE_FIELDS};

/// Backend names the `fluid` program and [`backend`] accept.
pub const BACKENDS: &[&str] = &["cpu", "wgpu", "vulkan"];

/// A backend by name, as a trait object: `cpu`, `wgpu` or `vulkan`.
pub fn backend(name: &str) -> Result<Box<dyn Backend>> {
    backend_with_threads(name, 0)
}

/// A backend by name; `threads` sets the CPU backend's worker count (`0`: one per core).
pub fn backend_with_threads(name: &str, threads: usize) -> Result<Box<dyn Backend>> {
    check_backend_name(name)?;
    match name {
        "cpu" => cpu_backend(threads),
        "wgpu" => wgpu_backend(),
        _ => vulkan_backend(),
    }
}

/// Refuse a backend name that is not one of [`BACKENDS`], naming the known ones.
pub fn check_backend_name(name: &str) -> Result<()> {
    if BACKENDS.contains(&name) {
        Ok(())
    } else {
        Err(Error::invalid("backend", name, format!("known backends: {}", BACKENDS.join(", "))))
    }
}

#[cfg(feature = "cpu")]
fn cpu_backend(threads: usize) -> Result<Box<dyn Backend>> {
    Ok(Box::new(CpuBackend::with_threads(threads)?))
}

#[cfg(feature = "wgpu")]
fn wgpu_backend() -> Result<Box<dyn Backend>> {
    Ok(Box::new(WgpuBackend::new()?))
}

#[cfg(not(feature = "wgpu"))]
fn wgpu_backend() -> Result<Box<dyn Backend>> {
    Err(Error::Unsupported { what: "backend `wgpu`".into(), by: "this build (enable the `wgpu` feature)".into() })
}

#[cfg(feature = "vulkan")]
fn vulkan_backend() -> Result<Box<dyn Backend>> {
    Ok(Box::new(VulkanBackend::new()?))
}

#[cfg(not(feature = "vulkan"))]
fn vulkan_backend() -> Result<Box<dyn Backend>> {
    Err(Error::Unsupported { what: "backend `vulkan`".into(), by: "this build (enable the `vulkan` feature)".into() })
}

#[cfg(not(feature = "cpu"))]
fn cpu_backend(_threads: usize) -> Result<Box<dyn Backend>> {
    Err(Error::Unsupported { what: "backend `cpu`".into(), by: "this build (enable the `cpu` feature)".into() })
}

/// Quality figures of the current state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Diagnostics {
    /// max |∇·u| of the current velocity (1/s), i.e. after the last projection.
    pub max_divergence: f64,
    /// Relative residual ‖b − A p‖ / ‖b‖ of the last pressure solve (0 when b = 0, NaN when
    /// the state is not finite).
    pub residual: f64,
    /// The largest |u| or |v| of a face (world units per second).
    pub max_velocity: f64,
    /// Courant number of the last step: `dt · max_velocity / h`, the cells the fastest face
    /// moves in one step. The semi-Lagrangian advection is stable beyond 1, but its error grows
    /// with it; values of several cells say `dt` is large for the flow.
    pub cfl: f64,
    /// max |x| of each field of the state, in the order of [`Diagnostics::STATE_FIELDS`]: NaN
    /// when the field holds a NaN, else +inf when it holds an infinity.
    pub state_max: [f64; STATE_FIELDS.len()],
}

impl Diagnostics {
    /// The fields [`Diagnostics::state_max`] covers: u, v, pressure, density, temperature, dye.
    pub const STATE_FIELDS: [FieldId; STATE_FIELDS.len()] = STATE_FIELDS;

    /// What the fields' maxima alone tell (the projection's figures NaN): the largest velocity
    /// and its Courant number for a step of `dt` on cells of side `h`.
    fn from_state(state_max: [f64; STATE_FIELDS.len()], dt: f32, h: f32) -> Diagnostics {
        // NaN-propagating (f64::max would skip a NaN component).
        let max_velocity =
            if state_max[0] >= state_max[1] || state_max[0].is_nan() { state_max[0] } else { state_max[1] };
        Diagnostics {
            max_divergence: f64::NAN,
            residual: f64::NAN,
            max_velocity,
            cfl: f64::from(dt) * max_velocity / f64::from(h),
            state_max,
        }
    }

    /// The fields of the state that hold a NaN or an infinity (empty while the simulation is
    /// sound).
    pub fn non_finite(&self) -> Vec<FieldId> {
        STATE_FIELDS.into_iter().zip(self.state_max).filter(|(_, m)| !m.is_finite()).map(|(f, _)| f).collect()
    }

    /// Whether every field of the state is finite.
    pub fn is_finite(&self) -> bool {
        self.state_max.iter().all(|m| m.is_finite())
    }

    /// Whether the flow ran away: the fastest face moved farther in the last step than the
    /// grid is wide (`cfl` above [`Grid::longest_side`]). The state is finite but
    /// meaningless, on its way to infinity; [`Simulation::checked_diagnostics`] calls it
    /// [`Error::RanAway`]. (The presets run at a Courant number of 0.5 to 5; Taichi's
    /// `stable_fluid.py` workload at about an eighth of the grid's width.)
    pub fn ran_away(&self, grid: &Grid) -> bool {
        self.cfl > f64::from(grid.longest_side())
    }
}

/// The schedules of a step whose solve stops at a tolerance.
struct Split {
    before: Schedule,
    after: Schedule,
    residual: Schedule,
    chunks: Vec<((u32, bool), Schedule)>,
}

impl Split {
    /// The split schedules of a scene whose pressure solve has a tolerance, else `None`.
    fn for_params(grid: &Grid, params: &SimParams) -> Option<Split> {
        params.pressure.tolerance.map(|_| {
            let (before, after) = Schedule::step_split(grid, params);
            Split { before, after, residual: Schedule::residual(grid), chunks: Vec::new() }
        })
    }
}

/// Set a freshly allocated (zeroed) state to the scene's initial conditions and splats, projected.
fn initialize<B: Backend>(scene: &Scene, grid: &Grid, backend: &mut B) -> Result<()> {
    for (field, data) in scene.initial_fields(grid) {
        backend.upload(field, &data)?;
    }
    let inputs = StepInputs { dt: scene.params.dt, time: 0.0, step: 0, splats: scene.initial_splats(grid) };
    backend.run(&Schedule::initialize(grid, &scene.params), &inputs)
}

/// Samples asked for with [`Simulation::request_sample`], on their way back from the device.
/// Dropping it lets the backend free the read.
#[derive(Debug)]
pub struct PendingSample {
    plan: SamplePlan,
    read: PendingRead,
}

impl PendingSample {
    /// The field sampled.
    pub fn field(&self) -> FieldId {
        self.plan.field()
    }

    /// Whether its samples were handed over.
    pub fn is_taken(&self) -> bool {
        self.read.is_taken()
    }
}

/// A whole field asked for with [`Simulation::request_field`], on its way back from the
/// device. Dropping it lets the backend free the read.
#[derive(Debug)]
pub struct PendingField {
    field: FieldId,
    read: PendingRead,
}

impl PendingField {
    /// The field asked for.
    pub fn field(&self) -> FieldId {
        self.field
    }

    /// Whether it was handed over.
    pub fn is_taken(&self) -> bool {
        self.read.is_taken()
    }
}

/// A running simulation: a scene on a backend.
pub struct Simulation<B: Backend = Box<dyn Backend>> {
    scene: Scene,
    grid: Grid,
    backend: B,
    step_schedule: Schedule,
    diagnostics_schedule: Schedule,
    state_schedule: Schedule,
    curl_schedule: Schedule,
    /// With a pressure tolerance: the step before and after its solve, the residual check, and
    /// the solve chunks by (iterations, warm).
    split: Option<Split>,
    last_iterations: u32,
    pending: Vec<Splat>,
    time: f32,
    steps: u32,
    last_dt: f32,
}

impl<B: Backend> std::fmt::Debug for Simulation<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulation")
            .field("scene", &self.scene.name)
            .field("grid", &self.grid)
            .field("backend", &self.backend.name())
            .field("steps", &self.steps)
            .finish_non_exhaustive()
    }
}

impl<B: Backend> Simulation<B> {
    /// Check the scene, allocate its fields on `backend`, set the initial conditions, apply
    /// the initial splats and project once.
    pub fn new(scene: Scene, mut backend: B) -> Result<Simulation<B>> {
        scene.validate()?;
        let grid = scene.grid()?;
        backend.allocate(&grid)?;
        initialize(&scene, &grid, &mut backend)?;
        Ok(Simulation {
            split: Split::for_params(&grid, &scene.params),
            last_iterations: scene.params.pressure.iterations,
            step_schedule: Schedule::step(&grid, &scene.params),
            diagnostics_schedule: Schedule::diagnostics(&grid),
            state_schedule: Schedule::state_check(&grid),
            curl_schedule: Schedule::curl(&grid),
            last_dt: scene.params.dt,
            scene,
            grid,
            backend,
            pending: Vec::new(),
            time: 0.0,
            steps: 0,
        })
    }

    /// Start again from the scene's initial state, as [`Simulation::new`] would (every field
    /// cleared, the initial conditions and splats applied and projected; time and step count
    /// back to zero, queued splats dropped), keeping the backend's allocation and prepared
    /// work: a game restarting an effect pays no setup.
    pub fn reset(&mut self) -> Result<()> {
        for field in FieldId::STATE_AND_SCRATCH {
            self.backend.upload(*field, &vec![0.0; self.grid.len(*field)])?;
        }
        initialize(&self.scene, &self.grid, &mut self.backend)?;
        self.pending.clear();
        self.time = 0.0;
        self.steps = 0;
        self.last_dt = self.scene.params.dt;
        self.last_iterations = self.scene.params.pressure.iterations;
        Ok(())
    }

    /// Queue a splat (world units) for the next step. Its numbers must be finite and its
    /// radius > 0 (an error names the value). It may reach past the box: along a wall the part
    /// outside adds nothing, so one wholly outside (a pointer dragged off the picture) changes
    /// nothing; along a periodic axis it wraps round, from any distance. Amounts for a field
    /// the scene does not carry (`params.fields`) are added to it but nothing moves them (a
    /// scene's own emitters may not do this: [`Scene::validate`]).
    pub fn splat(&mut self, splat: Splat) -> Result<()> {
        splat.validate("splat")?;
        self.pending.push(splat);
        Ok(())
    }

    /// Advance by `dt` seconds: the scene's emitters and the queued splats are applied.
    pub fn step(&mut self, dt: f32) -> Result<()> {
        if !dt.is_finite() || dt <= 0.0 {
            return Err(Error::invalid("dt", dt, "the time step must be a finite number > 0"));
        }
        let mut splats = self.scene.emitter_splats(&self.grid, dt);
        splats.append(&mut self.pending);
        let inputs = StepInputs { dt, time: self.time, step: self.steps, splats };
        match (self.split.as_mut(), self.scene.params.pressure.tolerance) {
            (Some(split), Some(tolerance)) => {
                let pr = self.scene.params.pressure;
                self.backend.run(&split.before, &inputs)?;
                let mut done = 0;
                while done < pr.iterations {
                    // The relaxation's pressure is this step's correction: it starts from zero.
                    let warm = done > 0 || (pr.warm_start && pr.solver != PressureSolver::Relaxation);
                    let key = (pr.solver.check_every().min(pr.iterations - done), warm);
                    let chunk = match split.chunks.iter().position(|(k, _)| *k == key) {
                        Some(i) => &split.chunks[i].1,
                        None => {
                            split.chunks.push((key, Schedule::solve(&self.grid, &pr, key.0, key.1)));
                            &split.chunks[split.chunks.len() - 1].1
                        }
                    };
                    self.backend.run(chunk, &inputs)?;
                    done += key.0;
                    self.backend.run(&split.residual, &inputs)?;
                    let r = self.backend.reductions()?;
                    let rhs = r[SLOT_RHS_SQ].sqrt();
                    if rhs == 0.0 || r[SLOT_RESIDUAL_SQ].sqrt() / rhs <= f64::from(tolerance) {
                        break;
                    }
                }
                self.backend.run(&split.after, &inputs)?;
                self.last_iterations = done;
            }
            _ => self.backend.run(&self.step_schedule, &inputs)?,
        }
        self.time += dt;
        self.steps += 1;
        self.last_dt = dt;
        Ok(())
    }

    /// Read a field (see [`fluid_core::grid`] for the layout). On a GPU backend it waits for
    /// the device; [`Simulation::request_field`] does not. `curl` is the vorticity of the
    /// current velocity, computed for the read (the step keeps it only as scratch of vorticity
    /// confinement).
    pub fn field(&mut self, field: FieldId) -> Result<Vec<f32>> {
        self.derive(field)?;
        self.backend.download(field)
    }

    /// Fill the `curl` field with the vorticity `∂v/∂x − ∂u/∂y` of the current velocity. Every
    /// read of `curl` through the simulation does this itself; call it before drawing the
    /// backend's curl buffer directly (`WgpuBackend::field_buffer`, `VulkanBackend::field_buffer`).
    /// Queued behind the steps so far; it does not wait.
    pub fn compute_curl(&mut self) -> Result<()> {
        let inputs = StepInputs { dt: self.last_dt, time: self.time, step: self.steps, splats: Vec::new() };
        self.backend.run(&self.curl_schedule, &inputs)
    }

    /// Bring a field that is derived from the state up to date before a read.
    fn derive(&mut self, field: FieldId) -> Result<()> {
        if field == FieldId::Curl { self.compute_curl() } else { Ok(()) }
    }

    /// Bilinear samples of a public field at world positions, e.g. the smoke density where a
    /// game character stands: one value per point, four (RGBA) for dye. One read-back for all
    /// the points, of only the values they interpolate ([`Backend::download_at`]; on a GPU
    /// backend it waits for the device, and for the steps still queued: a game sampling every
    /// frame wants [`Simulation::request_sample`], which does not). Points outside the box are
    /// an error naming them; see [`Grid::sample`], whose results these equal bit for bit.
    pub fn sample(&mut self, field: FieldId, points: &[[f32; 2]]) -> Result<Vec<f32>> {
        let grid = self.grid;
        grid.sample_with(field, points, |indices| {
            self.derive(field)?;
            self.backend.download_at(field, indices)
        })
    }

    /// [`Simulation::sample`] without waiting for the device: the read is queued behind every
    /// step so far ([`Backend::queue_download_at`]) and its samples come from
    /// [`Simulation::poll_sample`] (never waits; `None` until the device has made them) or
    /// [`Simulation::wait_sample`]. They are the state as of this call, whatever steps follow,
    /// and equal [`Simulation::sample`]'s bit for bit. A game asks each frame and takes the
    /// answer a frame or two later, so no frame waits for the GPU:
    ///
    /// ```
    /// # fn main() -> fluid::Result<()> {
    /// # let mut sim = fluid::Simulation::new(fluid::Scene::preset("smoke")?, fluid::backend("cpu")?)?;
    /// let mut asked = sim.request_sample(fluid::FieldId::Density, &[[0.5, 0.3]])?;
    /// sim.step(1.0 / 60.0)?; // the next frame
    /// if let Some(density) = sim.poll_sample(&mut asked)? {
    ///     // the density at (0.5, 0.3) before that step
    /// #   let _ = density;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn request_sample(&mut self, field: FieldId, points: &[[f32; 2]]) -> Result<PendingSample> {
        let plan = self.grid.sample_plan(field, points)?;
        self.derive(field)?;
        let read = self.backend.queue_download_at(field, plan.indices())?;
        Ok(PendingSample { plan, read })
    }

    /// The samples of a [`Simulation::request_sample`] once the device has made them, `None`
    /// until then; never waits. Each request's samples are handed over once: polling it again
    /// is an error.
    pub fn poll_sample(&mut self, pending: &mut PendingSample) -> Result<Option<Vec<f32>>> {
        match self.backend.poll_download(&mut pending.read)? {
            Some(values) => pending.plan.finish(&values).map(Some),
            None => Ok(None),
        }
    }

    /// The samples of a [`Simulation::request_sample`], waiting for the device where they are
    /// not there yet.
    pub fn wait_sample(&mut self, pending: PendingSample) -> Result<Vec<f32>> {
        let values = self.backend.wait_download(pending.read)?;
        pending.plan.finish(&values)
    }

    /// [`Simulation::field`] without waiting for the device, as [`Simulation::request_sample`]
    /// does for samples: the whole field as of this call, from [`Simulation::poll_field`] or
    /// [`Simulation::wait_field`] (e.g. the dye for a CPU-side effect, a frame late).
    pub fn request_field(&mut self, field: FieldId) -> Result<PendingField> {
        self.derive(field)?;
        Ok(PendingField { field, read: self.backend.queue_download(field)? })
    }

    /// The field of a [`Simulation::request_field`] once the device has made it, `None` until
    /// then; never waits. Handed over once.
    pub fn poll_field(&mut self, pending: &mut PendingField) -> Result<Option<Vec<f32>>> {
        self.backend.poll_download(&mut pending.read)
    }

    /// The field of a [`Simulation::request_field`], waiting for the device where it is not
    /// there yet.
    pub fn wait_field(&mut self, pending: PendingField) -> Result<Vec<f32>> {
        self.backend.wait_download(pending.read)
    }

    /// Overwrite a field. Its values must be finite: a NaN or an infinity is refused with the
    /// field's name, the first bad index and its value, since a state fed one only blows up
    /// later. ([`Backend::upload`] on [`Simulation::backend_mut`] takes anything.)
    pub fn set_field(&mut self, field: FieldId, data: &[f32]) -> Result<()> {
        if let Some((k, x)) = data.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            return Err(Error::invalid(format!("{}[{k}]", field.name()), x, "field values must be finite"));
        }
        self.backend.upload(field, data)?;
        if field == FieldId::Pressure {
            // The pressure is now exactly these values: drop the low part of the old one.
            self.backend.upload(FieldId::PressureLo, &vec![0.0; data.len()])?;
        }
        Ok(())
    }

    /// Carry on under another scene: new parameters, emitters and render settings from the next
    /// step on, with the state (velocity, pressure, density, temperature, dye, obstacles) kept
    /// as it is: what a tool that tunes vorticity or buoyancy while the flow runs needs. The
    /// scene's initial conditions and initial splats are not applied again. The grid (its
    /// size, cell size and boundaries) is fixed for a running simulation: a scene with another
    /// grid is refused, naming both, and so is a scene that fails [`Scene::validate`]; after
    /// an error the simulation runs on unchanged.
    pub fn set_scene(&mut self, scene: Scene) -> Result<()> {
        scene.validate()?;
        let grid = scene.grid()?;
        if grid != self.grid {
            let show = |g: &Grid| format!("{}x{}, h {}, {:?} x {:?}", g.nx, g.ny, g.h, g.boundary_x, g.boundary_y);
            return Err(Error::invalid(
                "grid",
                show(&grid),
                format!(
                    "a running simulation keeps its grid ({}): build a new Simulation for another size, cell size or boundary",
                    show(&self.grid)
                ),
            ));
        }
        let (old, new) = (&self.scene.params.pressure, &scene.params.pressure);
        let pressure_lo_stale = old.solver != new.solver || old.precision != new.precision;
        if pressure_lo_stale {
            // Only the double-float solvers write the low part; the others read it as given.
            self.backend.upload(FieldId::PressureLo, &vec![0.0; self.grid.len(FieldId::PressureLo)])?;
        }
        self.split = Split::for_params(&grid, &scene.params);
        self.step_schedule = Schedule::step(&grid, &scene.params);
        self.scene = scene;
        Ok(())
    }

    /// [`Simulation::set_scene`] with only the parameters changed (the emitters and the render
    /// settings stay): for example a stronger vorticity confinement from the next step on.
    pub fn set_params(&mut self, params: SimParams) -> Result<()> {
        let mut scene = self.scene.clone();
        scene.params = params;
        self.set_scene(scene)
    }

    /// max |∇·u| now, the relative residual of the last pressure solve, the largest velocity
    /// and its Courant number, and whether the state is finite (costs one pass and nine
    /// reductions, and waits for the device).
    pub fn diagnostics(&mut self) -> Result<Diagnostics> {
        let inputs = StepInputs { dt: self.last_dt, time: self.time, step: self.steps, splats: Vec::new() };
        self.backend.run(&self.diagnostics_schedule, &inputs)?;
        let r = self.backend.reductions()?;
        let rhs = r[SLOT_RHS_SQ].sqrt();
        let state_max: [f64; STATE_FIELDS.len()] = std::array::from_fn(|k| r[SLOT_STATE_MAX + k]);
        Ok(Diagnostics {
            max_divergence: r[SLOT_MAX_DIVERGENCE],
            // NaN when the state is (0 only for a right-hand side that is truly zero).
            residual: if rhs > 0.0 || rhs.is_nan() { r[SLOT_RESIDUAL_SQ].sqrt() / rhs } else { 0.0 },
            ..Diagnostics::from_state(state_max, self.last_dt, self.grid.h)
        })
    }

    /// Whether the state is sound, cheaply: max |x| of each field of the state (six reductions,
    /// no other pass; on a GPU backend it waits for the device), then [`Error::NonFinite`] or
    /// [`Error::RanAway`] as [`Simulation::checked_diagnostics`] reports them. What the `fluid`
    /// program runs after every step.
    pub fn check_state(&mut self) -> Result<()> {
        let inputs = StepInputs { dt: self.last_dt, time: self.time, step: self.steps, splats: Vec::new() };
        self.backend.run(&self.state_schedule, &inputs)?;
        let r = self.backend.reductions()?;
        let state_max: [f64; STATE_FIELDS.len()] = std::array::from_fn(|k| r[SLOT_STATE_MAX + k]);
        self.judge(&Diagnostics::from_state(state_max, self.last_dt, self.grid.h)).map(|_| ())
    }

    /// `d`, or the error that says the state it describes is not sound.
    fn judge(&self, d: &Diagnostics) -> Result<Diagnostics> {
        let bad = d.non_finite();
        if !bad.is_empty() {
            return Err(Error::NonFinite {
                step: self.steps,
                fields: bad.iter().map(|f| f.name()).collect::<Vec<_>>().join(", "),
                dt: self.last_dt,
            });
        }
        if d.ran_away(&self.grid) {
            return Err(Error::RanAway {
                step: self.steps,
                cfl: d.cfl,
                cells: self.grid.longest_side(),
                dt: self.last_dt,
            });
        }
        Ok(*d)
    }

    /// [`Simulation::diagnostics`], or [`Error::NonFinite`] naming the fields that hold a NaN
    /// or an infinity, or [`Error::RanAway`] when the state is finite but its fastest face
    /// moved farther in the last step than the grid is wide ([`Diagnostics::ran_away`]): a
    /// blown-up simulation (a time step far too large for the flow, forces beyond `f32`) never
    /// reads as a quiet one.
    pub fn checked_diagnostics(&mut self) -> Result<Diagnostics> {
        let d = self.diagnostics()?;
        self.judge(&d)
    }

    /// The current frame as RGBA8, `nx × ny`, top row first, drawn as the scene's `[render]` says.
    /// A field the scene does not carry (`params.fields`) is an error ([`Scene::check_render`]).
    pub fn render(&mut self) -> Result<Vec<u8>> {
        self.scene.check_render()?;
        let source = self.scene.render.field.source();
        self.derive(source)?;
        let spec = &self.scene.render;
        let data = self.backend.download(source)?;
        Ok(spec.render(&self.grid, &data, self.scene.params.buoyancy.ambient_temperature))
    }

    /// The scene.
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// The grid.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The backend (for example `WgpuBackend::field_buffer`, to draw a field on the GPU).
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The backend.
    pub fn backend_mut(&mut self) -> &mut B {
        &mut self.backend
    }

    /// Simulated seconds.
    pub fn time(&self) -> f32 {
        self.time
    }

    /// Steps taken.
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// Pressure iterations (sweeps, SOR iterations or V-cycles) the last step used: the
    /// configured count, or fewer when `params.pressure.tolerance` stopped the solve early.
    pub fn last_iterations(&self) -> u32 {
        self.last_iterations
    }
}
