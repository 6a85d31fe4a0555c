//! [`Simulation`]: a scene's model on a backend, stepped, read, sampled and checked. It runs any
//! [`Model`]; what the grid fluid adds (its diagnostics, its fields) it reaches through the
//! model's trait.

mod fit;

pub use fit::{Fitted, plan};

use crate::frame::solid::{Motion, Obstacle, Pose};
use crate::frame::{Frame, SamplePlan};
use crate::grid::params::SimParams;
use crate::model::{FieldInfo, FieldName, Model};
use crate::render::{Renderer, Shot};
use crate::replay::{Input, InputLog};
use crate::scene::Scene;
use crate::splat::Splat;
use swirly_ir::backend::{Backend, PendingRead, StepInputs};
use swirly_ir::{Error, Result};

pub use crate::model::Diagnostics;

/// Samples asked for with [`Simulation::request_sample`], on their way back from the device.
/// Dropping it lets the backend free the read.
#[derive(Debug)]
pub struct PendingSample {
    plan: SamplePlan,
    read: PendingRead,
}

impl PendingSample {
    /// The field sampled.
    pub fn field(&self) -> &'static str {
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
    field: &'static str,
    read: PendingRead,
    /// Values live when asked (the particles' room past them is not handed over).
    live: Option<usize>,
}

impl PendingField {
    /// The field asked for.
    pub fn field(&self) -> &'static str {
        self.field
    }

    /// Whether it was handed over.
    pub fn is_taken(&self) -> bool {
        self.read.is_taken()
    }
}

/// A running simulation: a scene's model on a backend.
pub struct Simulation<B: Backend = Box<dyn Backend>> {
    scene: Scene,
    model: Box<dyn Model>,
    backend: B,
    pending: Vec<Splat>,
    time: f32,
    steps: u64,
    last_dt: f32,
    recording: Option<InputLog>,
    downscaled_from: Option<[u32; 2]>,
    last_substeps: u32,
    renderer: Renderer,
}

impl<B: Backend> std::fmt::Debug for Simulation<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulation")
            .field("scene", &self.scene.name)
            .field("model", &self.model.family())
            .field("frame", self.model.frame())
            .field("backend", &self.backend.name())
            .field("steps", &self.steps)
            .finish_non_exhaustive()
    }
}

impl<B: Backend> Simulation<B> {
    /// Check the scene, allocate its model's resources on `backend`, set the initial
    /// conditions, apply the initial splats and project once.
    ///
    /// With a `storage.budget` the scene's [`crate::storage::MemoryPlan`] on `backend` is
    /// checked first: a scene that needs more is refused ([`Error::OverBudget`]) or, with
    /// `storage.policy = "downscale"`, runs on the largest grid of its box that fits
    /// ([`Simulation::downscaled_from`] says from what).
    ///
    /// ```
    /// use swirly_core::{Scene, Simulation};
    /// # fn main() -> swirly_core::Result<()> {
    /// let scene = Scene::from_toml("[grid]\nnx = 64\nny = 32", "a wide box")?;
    /// let mut sim = Simulation::new(scene, swirly_cpu::CpuBackend::new()?)?;
    /// sim.step(1.0 / 60.0)?;
    /// assert_eq!((sim.steps(), sim.frame().nx, sim.frame().ny), (1, 64, 32));
    /// # Ok(()) }
    /// ```
    pub fn new(scene: Scene, backend: B) -> Result<Simulation<B>> {
        if scene.storage.budget.is_none() {
            let model = scene.model()?;
            return Simulation::with_model(scene, model, backend);
        }
        let (fitted, model) = fit::fit(&scene, &backend)?;
        let mut sim = Simulation::with_model(fitted.scene, model, backend)?;
        sim.downscaled_from = fitted.downscaled_from;
        Ok(sim)
    }

    /// The grid `[nx, ny]` the scene asked for, when its budget made [`Simulation::new`] run a
    /// smaller one, or a coarser dye (this simulation's grid says what runs).
    pub fn downscaled_from(&self) -> Option<[u32; 2]> {
        self.downscaled_from
    }

    fn with_model(scene: Scene, mut model: Box<dyn Model>, mut backend: B) -> Result<Simulation<B>> {
        backend.allocate(model.resources())?;
        model.initialize(&mut backend)?;
        let last_dt = scene.params.dt;
        Ok(Simulation {
            scene,
            model,
            backend,
            pending: Vec::new(),
            time: 0.0,
            steps: 0,
            last_dt,
            recording: None,
            downscaled_from: None,
            last_substeps: 1,
            renderer: Renderer::default(),
        })
    }

    /// Inputs of a pass that is not a step (reads, diagnostics): the last step's `dt`.
    fn pass_inputs(&self) -> StepInputs {
        StepInputs { dt: self.last_dt, time: self.time, step: self.steps as u32, ..StepInputs::default() }
    }

    /// Start again from the scene's initial state, as [`Simulation::new`] would (every field
    /// cleared, the initial conditions and splats applied and projected; time and step count
    /// back to zero, queued splats dropped), keeping the backend's allocation and prepared
    /// work: a game restarting an effect pays no setup.
    pub fn reset(&mut self) -> Result<()> {
        for (i, r) in self.model.resources().iter().enumerate() {
            // Transient resources hold nothing between runs (and refuse writes).
            if !r.is_empty() && r.shares().is_none() {
                self.backend.write(swirly_ir::ResourceId(i as u32), &vec![0u8; r.bytes() as usize])?;
            }
        }
        self.model.initialize(&mut self.backend)?;
        self.pending.clear();
        self.time = 0.0;
        self.steps = 0;
        self.last_dt = self.scene.params.dt;
        self.last_substeps = 1;
        self.renderer.clear();
        self.record(|| Input::Reset);
        Ok(())
    }

    /// Record every input from now on ([`crate::replay`]): from the start only (a new
    /// simulation, or one just reset, with no splat queued), since a log replays from its
    /// scene's initial state. Recording again starts a new log.
    pub fn start_recording(&mut self) -> Result<()> {
        if self.steps > 0 || !self.pending.is_empty() {
            return Err(Error::invalid(
                "start_recording",
                format!("after {} steps", self.steps),
                "a log replays from the scene's start: record from a new or reset simulation, before any splat",
            ));
        }
        self.recording = Some(InputLog::new(self.scene.clone()));
        Ok(())
    }

    /// The log recorded since [`Simulation::start_recording`], if recording.
    pub fn recording(&self) -> Option<&InputLog> {
        self.recording.as_ref()
    }

    /// Stop recording, handing the log over.
    pub fn stop_recording(&mut self) -> Option<InputLog> {
        self.recording.take()
    }

    fn record(&mut self, input: impl FnOnce() -> Input) {
        if let Some(log) = self.recording.as_mut() {
            log.inputs.push(input());
        }
    }

    /// `splat` without the amounts its model would refuse (a field the scene does not carry;
    /// temperature, dye or fuel on the particle liquid): a splat every scene accepts.
    pub fn carried(&self, splat: Splat) -> Splat {
        self.model.carried(splat)
    }

    /// What a pointer dragged through the fluid applies, from the stroke `splat` (the viewer's
    /// drag): [`Simulation::carried`], and on the particle liquid only the push.
    pub fn pointer(&self, splat: Splat) -> Splat {
        self.model.pointer(splat)
    }

    /// Queue a splat (world units: the box is [`Frame::width`] × [`Frame::height`]) for the
    /// next step. Its numbers must be finite and its radius > 0 (an error names the value). It
    /// may reach past the box: along a wall the part outside adds nothing, so one wholly
    /// outside (a pointer dragged off the picture) changes nothing; along a periodic axis it
    /// wraps round, from any distance. An amount for a field the scene does not carry
    /// (`params.fields`) is an error naming it: nothing would hold it.
    ///
    /// ```
    /// use swirly_core::{Scene, Simulation};
    /// # fn main() -> swirly_core::Result<()> {
    /// # let scene = Scene::from_toml("[grid]\nnx = 32\nny = 32", "a small box")?;
    /// # let mut sim = Simulation::new(scene, swirly_cpu::CpuBackend::new()?)?;
    /// use swirly_core::Splat;
    /// // A puff of density moving right, a fifth of the way up the box.
    /// let (w, h) = (sim.frame().width(), sim.frame().height());
    /// let puff = Splat { center: [0.5 * w, 0.2 * h], radius: 0.05 * h, density: 1.0, velocity: [0.5, 0.0], ..Splat::default() };
    /// sim.splat(puff)?;
    /// sim.step(1.0 / 60.0)?;
    /// assert!(sim.field("density")?.iter().any(|&d| d > 0.0));
    /// assert!(sim.splat(Splat { radius: f32::NAN, ..puff }).is_err());
    /// # Ok(()) }
    /// ```
    pub fn splat(&mut self, splat: Splat) -> Result<()> {
        splat.validate("splat")?;
        self.model.check_splat(&splat)?;
        let queued = self.pending.len() + self.model.emitter_count();
        if queued >= crate::splat::MAX_SPLATS {
            return Err(Error::invalid(
                "splat",
                queued + 1,
                format!(
                    "a step applies at most {} splats, emitters included: step before queueing more",
                    crate::splat::MAX_SPLATS
                ),
            ));
        }
        self.pending.push(splat);
        self.record(|| Input::Splat { splat });
        Ok(())
    }

    /// Advance by `dt` seconds: the scene's emitters and the queued splats are applied. With
    /// `params.cfl` set, the flow is measured first (waiting for the device) and a step whose
    /// fastest face would move more cells than that is split into equal substeps (at most
    /// `params.max_substeps`): the queued splats go into the first, the emitters into each for
    /// its part of `dt`. [`Simulation::last_substeps`] says how many; the step count grows by one.
    pub fn step(&mut self, dt: f32) -> Result<()> {
        if !dt.is_finite() || dt <= 0.0 {
            return Err(Error::invalid("dt", dt, "the time step must be a finite number > 0"));
        }
        let n = self.substeps(dt)?;
        let sub = dt / n as f32;
        let mut pending = std::mem::take(&mut self.pending);
        for k in 0..n {
            let mut splats = self.model.emitters(sub);
            splats.append(&mut pending);
            // The kernels take the step's low 32 bits.
            let step = self.steps as u32;
            let inputs = StepInputs { dt: sub, time: self.time + k as f32 * sub, step, ..StepInputs::default() };
            self.model.step(&mut self.backend, &inputs, &splats)?;
        }
        self.time += dt;
        self.steps += 1;
        self.last_dt = sub;
        self.last_substeps = n;
        self.record(|| Input::Step { dt });
        Ok(())
    }

    /// Substeps a step of `dt` takes: `⌈dt · max |u| / (cfl · h)⌉` within
    /// `[1, params.max_substeps]`, or 1 without `params.cfl`.
    fn substeps(&mut self, dt: f32) -> Result<u32> {
        let params = &self.scene.params;
        let (Some(cfl), most) = (params.cfl, params.max_substeps) else { return Ok(1) };
        let h = self.model.frame().h;
        let inputs = self.pass_inputs();
        let d = self.model.state_maxima(&mut self.backend, &inputs)?;
        let courant = f64::from(dt) * d.max_velocity / f64::from(h);
        // A state that is not finite takes one step (and fails its check after).
        if !courant.is_finite() {
            return Ok(1);
        }
        Ok(((courant / f64::from(cfl)).ceil() as u64).clamp(1, u64::from(most)) as u32)
    }

    /// Substeps the last step was split into (1 without `params.cfl`).
    pub fn last_substeps(&self) -> u32 {
        self.last_substeps
    }

    /// The readable fields of the model (name, where their values sit, channels).
    pub fn fields(&self) -> Vec<FieldInfo> {
        self.model.fields()
    }

    /// The field `name` of the model, or an error listing those it has.
    pub fn field_info(&self, name: &str) -> Result<FieldInfo> {
        let fields = self.model.fields();
        fields.iter().find(|f| f.name == name).copied().ok_or_else(|| Error::UnknownField {
            name: name.to_string(),
            known: fields.iter().map(|f| f.name).collect::<Vec<_>>().join(", "),
        })
    }

    /// Sample points of `field` now: its cells or faces, a liquid's live particles.
    pub fn points(&self, field: impl FieldName) -> Result<usize> {
        Ok(self.readable_info(field.field_name())?.lattice.points(self.model.frame()))
    }

    /// The resource that holds `field` now (derived fields such as `curl` brought up to date),
    /// and the field's description.
    fn readable(&mut self, field: &str) -> Result<(swirly_ir::ResourceId, FieldInfo)> {
        let info = self.readable_info(field)?;
        let inputs = self.pass_inputs();
        Ok((self.model.readable(&mut self.backend, info.name, &inputs)?, info))
    }

    /// The field `field`'s description: for a name the model has no field of, the model's
    /// own error (it says why: a field the scene does not carry), else one listing its fields.
    fn readable_info(&self, field: &str) -> Result<FieldInfo> {
        self.field_info(field).or_else(|unknown| {
            self.model.check_field(field)?;
            Err(unknown)
        })
    }

    /// Read a field by name (see [`crate::grid`] for the grid's layouts). On a GPU backend it
    /// waits for the device; [`Simulation::request_field`] does not. `curl` is the vorticity
    /// of the current velocity, computed for the read (the step keeps it only as scratch of
    /// vorticity confinement). A field the scene does not carry (`params.fields`) is an error
    /// naming it.
    ///
    /// ```
    /// use swirly_core::{Scene, Simulation};
    /// # fn main() -> swirly_core::Result<()> {
    /// # let scene = Scene::from_toml("[grid]\nnx = 32\nny = 32", "a small box")?;
    /// # let mut sim = Simulation::new(scene, swirly_cpu::CpuBackend::new()?)?;
    /// let density = sim.field("density")?; // [ny, nx], row 0 at the bottom
    /// let u = sim.field(swirly_core::FieldId::U)?; // at the vertical faces: [ny, nx + 1]
    /// assert_eq!((density.len(), u.len()), (32 * 32, 32 * 33));
    /// assert!(sim.field("smell").is_err());
    /// # Ok(()) }
    /// ```
    pub fn field(&mut self, field: impl FieldName) -> Result<Vec<f32>> {
        let (id, info) = self.readable(field.field_name())?;
        let mut values = self.backend.download(id)?;
        values.truncate(info.len(self.model.frame()));
        Ok(values)
    }

    /// Fill the `curl` field with the vorticity `∂v/∂x − ∂u/∂y` of the current velocity. Every
    /// read of `curl` through the simulation does this itself; call it before drawing the
    /// backend's curl buffer directly (`WgpuBackend::field_buffer`, `VulkanBackend::field_buffer`).
    /// Queued behind the steps so far; it does not wait.
    pub fn compute_curl(&mut self) -> Result<()> {
        self.readable("curl").map(|_| ())
    }

    /// Bilinear samples of a public field at world positions, e.g. the smoke density where a
    /// game character stands: one value per point, four (RGBA) for dye. One read-back for all
    /// the points, of only the values they interpolate ([`Backend::download_at`]; on a GPU
    /// backend it waits for the device, and for the steps still queued: a game sampling every
    /// frame wants [`Simulation::request_sample`], which does not). Points outside the box are
    /// an error naming them; [`crate::grid::Grid::sample`] is the reference, whose
    /// results these equal bit for bit.
    pub fn sample(&mut self, field: impl FieldName, points: &[[f32; 2]]) -> Result<Vec<f32>> {
        let plan = self.sample_plan(field.field_name(), points)?;
        plan.read(|indices| {
            let (id, _) = self.readable(plan.field())?;
            self.backend.download_at(id, indices)
        })
    }

    /// How to sample the field `name` at `points`.
    fn sample_plan(&self, name: &str, points: &[[f32; 2]]) -> Result<SamplePlan> {
        let info = self.readable_info(name)?;
        self.model.frame().sample_plan(info.name, info.lattice, info.channels, points)
    }

    /// [`Simulation::sample`] without waiting for the device: the read is queued behind every
    /// step so far ([`Backend::queue_download_at`]) and its samples come from
    /// [`Simulation::poll_sample`] (never waits; `None` until the device has made them) or
    /// [`Simulation::wait_sample`]. They are the state as of this call, whatever steps follow,
    /// and equal [`Simulation::sample`]'s bit for bit. A game asks each frame and takes the
    /// answer a frame or two later, so no frame waits for the GPU:
    ///
    /// ```
    /// # fn main() -> swirly_core::Result<()> {
    /// # fn example<B: swirly_core::Backend>(mut sim: swirly_core::sim::Simulation<B>) -> swirly_core::Result<()> {
    /// let mut asked = sim.request_sample("density", &[[0.5, 0.3]])?;
    /// sim.step(1.0 / 60.0)?; // the next frame
    /// if let Some(density) = sim.poll_sample(&mut asked)? {
    ///     // the density at (0.5, 0.3) before that step
    /// #   let _ = density;
    /// }
    /// # Ok(()) }
    /// # Ok(()) }
    /// ```
    pub fn request_sample(&mut self, field: impl FieldName, points: &[[f32; 2]]) -> Result<PendingSample> {
        let plan = self.sample_plan(field.field_name(), points)?;
        let (id, _) = self.readable(plan.field())?;
        let read = self.backend.queue_download_at(id, plan.indices())?;
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
    pub fn request_field(&mut self, field: impl FieldName) -> Result<PendingField> {
        let (id, info) = self.readable(field.field_name())?;
        let live = Some(info.len(self.model.frame()));
        Ok(PendingField { field: info.name, read: self.backend.queue_download(id)?, live })
    }

    /// The field of a [`Simulation::request_field`] once the device has made it, `None` until
    /// then; never waits. Handed over once.
    pub fn poll_field(&mut self, pending: &mut PendingField) -> Result<Option<Vec<f32>>> {
        let live = pending.live;
        Ok(self.backend.poll_download(&mut pending.read)?.map(|mut v| {
            v.truncate(live.unwrap_or(v.len()));
            v
        }))
    }

    /// The field of a [`Simulation::request_field`], waiting for the device where it is not
    /// there yet.
    pub fn wait_field(&mut self, pending: PendingField) -> Result<Vec<f32>> {
        let mut values = self.backend.wait_download(pending.read)?;
        values.truncate(pending.live.unwrap_or(values.len()));
        Ok(values)
    }

    /// Place obstacle `index` (in the scene's order) at `pose` now, moving with `motion` from
    /// here on (world units, radians, per second): what a game moves a character or a paddle
    /// with, frame by frame. The device rasterises the obstacle where it stands at the end of
    /// each step, so nothing is re-recorded and no field is uploaded; the solid pushes the
    /// fluid with its velocity (`motion`, plus `ω × r`). An index past the scene's obstacles
    /// or a non-finite number is an error naming it.
    ///
    /// ```
    /// use swirly_core::{Scene, Simulation};
    /// use swirly_core::frame::solid::{Motion, Pose};
    /// # fn main() -> swirly_core::Result<()> {
    /// let scene = Scene::from_toml(
    ///     "[grid]\nnx = 32\nny = 32\n[[obstacles]]\nshape = \"circle\"\nradius = 0.1\nposition = [0.3, 0.5]",
    ///     "a paddle",
    /// )?;
    /// let mut sim = Simulation::new(scene, swirly_cpu::CpuBackend::new()?)?;
    /// // Each frame, where the game has it: here 0.6 of the way across, moving right.
    /// let x = 0.6 * sim.frame().width();
    /// sim.set_obstacle(0, Pose { position: [x, 0.5], angle: 0.0 }, Motion { velocity: [0.2, 0.0], angular_velocity: 0.0 })?;
    /// sim.step(1.0 / 60.0)?;
    /// assert!(sim.set_obstacle(1, Pose::default(), Motion::default()).is_err()); // there is one
    /// # Ok(()) }
    /// ```
    pub fn set_obstacle(&mut self, index: usize, pose: Pose, motion: Motion) -> Result<()> {
        self.model.set_obstacle(&mut self.backend, index, pose, motion, self.time)?;
        self.record(|| Input::SetObstacle {
            index,
            position: pose.position,
            angle: pose.angle,
            velocity: motion.velocity,
            angular_velocity: motion.angular_velocity,
        });
        Ok(())
    }

    /// Whether `field` can be read: a public field the scene carries (density, temperature and
    /// dye as `params.fields` says, the solid fields only with obstacles).
    pub fn carries(&self, field: impl FieldName) -> bool {
        self.model.fields().iter().any(|f| f.name == field.field_name())
    }

    /// The obstacles as they stand now (world units and radians), in the scene's order.
    pub fn obstacles(&self) -> Vec<Obstacle> {
        self.model.obstacles().iter().map(|o| o.at(self.time)).collect()
    }

    /// Overwrite a field. Its values must be finite: a NaN or an infinity is refused with the
    /// field's name, the first bad index and its value, since a state fed one only blows up
    /// later. ([`Backend::upload`] on [`Simulation::backend_mut`] takes anything.)
    ///
    /// ```
    /// use swirly_core::{Scene, Simulation};
    /// # fn main() -> swirly_core::Result<()> {
    /// # let scene = Scene::from_toml("[grid]\nnx = 32\nny = 32", "a small box")?;
    /// # let mut sim = Simulation::new(scene, swirly_cpu::CpuBackend::new()?)?;
    /// // A band of dye-free density across the lower third.
    /// let density: Vec<f32> = (0..32 * 32).map(|i| if i / 32 < 11 { 1.0 } else { 0.0 }).collect();
    /// sim.set_field("density", &density)?;
    /// assert_eq!(sim.field("density")?, density);
    /// assert!(sim.set_field("density", &[f32::NAN; 32 * 32]).is_err());
    /// # Ok(()) }
    /// ```
    pub fn set_field(&mut self, field: impl FieldName, data: &[f32]) -> Result<()> {
        let name = field.field_name();
        if let Some((k, x)) = data.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            return Err(Error::invalid(format!("{name}[{k}]"), x, "field values must be finite"));
        }
        let info = self.readable_info(name)?;
        self.model.check_writable(info.name)?;
        let (id, _) = self.readable(info.name)?;
        let live = info.len(self.model.frame());
        if data.len() == live && (live as u64) < self.backend.resources()[id.index()].scalars() {
            // The live values (a liquid's particles), the room past them kept.
            let mut all = self.backend.download(id)?;
            all[..live].copy_from_slice(data);
            self.backend.upload(id, &all)?;
        } else {
            self.backend.upload(id, data)?;
        }
        self.model.written(&mut self.backend, info.name)?;
        self.record(|| Input::SetField { field: info.name.to_string(), values: data.to_vec() });
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
        let next = scene.model()?;
        check_budget(&scene, next.as_ref(), &self.backend, "a running simulation keeps its grid")?;
        self.model.adopt(next, &mut self.backend)?;
        if self.recording.is_some() {
            let recorded = scene.clone();
            self.record(|| Input::SetScene { scene: Box::new(recorded) });
        }
        self.scene = scene;
        Ok(())
    }

    /// [`Simulation::set_scene`] with only the parameters changed (the emitters and the render
    /// settings stay): for example a stronger vorticity confinement from the next step on.
    ///
    /// ```
    /// use swirly_core::{Scene, Simulation};
    /// # fn main() -> swirly_core::Result<()> {
    /// # let scene = Scene::from_toml("[grid]\nnx = 32\nny = 32", "a small box")?;
    /// # let mut sim = Simulation::new(scene, swirly_cpu::CpuBackend::new()?)?;
    /// let mut params = sim.scene().params.clone();
    /// params.vorticity = 8.0;
    /// sim.set_params(params)?;
    /// assert_eq!(sim.scene().params.vorticity, 8.0);
    /// # Ok(()) }
    /// ```
    pub fn set_params(&mut self, params: SimParams) -> Result<()> {
        let mut scene = self.scene.clone();
        scene.params = params;
        self.set_scene(scene)
    }

    /// max |∇·u| now, the relative residual of the last pressure solve, the largest velocity
    /// and its Courant number, and whether the state is finite (costs one pass and nine
    /// reductions, and waits for the device).
    pub fn diagnostics(&mut self) -> Result<Diagnostics> {
        let inputs = self.pass_inputs();
        self.model.diagnostics(&mut self.backend, &inputs)
    }

    /// Whether the state is sound, cheaply: max |x| of each field of the state (six reductions,
    /// no other pass; on a GPU backend it waits for the device), then [`Error::NonFinite`] or
    /// [`Error::RanAway`] as [`Simulation::checked_diagnostics`] reports them. What the `fluid`
    /// program runs after every step.
    pub fn check_state(&mut self) -> Result<()> {
        let inputs = self.pass_inputs();
        let d = self.model.state_maxima(&mut self.backend, &inputs)?;
        self.judge(&d).map(|_| ())
    }

    /// `d`, or the error that says the state it describes is not sound.
    fn judge(&self, d: &Diagnostics) -> Result<Diagnostics> {
        let bad = d.non_finite();
        if !bad.is_empty() {
            return Err(Error::NonFinite { step: self.steps, fields: bad.join(", "), dt: self.last_dt });
        }
        let frame = self.model.frame();
        if d.ran_away(frame) {
            return Err(Error::RanAway { step: self.steps, cfl: d.cfl, cells: frame.longest_side(), dt: self.last_dt });
        }
        Ok(d.clone())
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

    /// The current frame as RGBA8 pixels with their size ([`Simulation::picture_size`]: the
    /// dye's or density's own when a layer shows a finer one, so it can be larger than the
    /// grid), top row first, drawn as the scene's `[render]` says.
    /// A field the scene does not carry (`params.fields`, or one of the grid's in a particle
    /// scene) is an error naming the layer ([`Scene::check_render`]).
    ///
    /// The backend draws it with the render kernels ([`crate::render::kernels`]) where the
    /// fields are, so a GPU frame comes back as one copy of the picture. A particle liquid's
    /// velocity and speed views, and a frame whose resources would pass the scene's
    /// `storage.budget`, are composed on the host from the fields instead (the same picture).
    ///
    /// ```
    /// use swirly_core::{Scene, Simulation};
    /// # fn main() -> swirly_core::Result<()> {
    /// # let scene = Scene::from_toml("[grid]\nnx = 32\nny = 32", "a small box")?;
    /// # let mut sim = Simulation::new(scene, swirly_cpu::CpuBackend::new()?)?;
    /// let picture = sim.render()?; // RGBA8, top row first
    /// assert_eq!(picture.rgba.len(), 4 * picture.width as usize * picture.height as usize);
    /// # Ok(()) }
    /// ```
    pub fn render(&mut self) -> Result<crate::render::Picture> {
        self.scene.check_render()?;
        let (renderer, shot) = self.shot();
        let (rgba, (width, height)) = renderer.render(shot)?;
        Ok(crate::render::Picture { width, height, rgba })
    }

    /// Pixels across and down of [`Simulation::render`]'s picture.
    pub fn picture_size(&self) -> (u32, u32) {
        self.scene.render.size(&Renderer::canvas(self.model.as_ref()))
    }

    /// The renderer and a frame's inputs for it.
    fn shot(&mut self) -> (&mut Renderer, Shot<'_>) {
        let inputs = self.pass_inputs();
        let shot = Shot {
            model: self.model.as_mut(),
            backend: &mut self.backend,
            spec: &self.scene.render,
            budget: self.scene.storage.budget,
            ambient: self.scene.params.buoyancy.ambient_temperature,
            inputs,
            time: self.time,
        };
        (&mut self.renderer, shot)
    }

    /// The current frame drawn by the render kernels and left on the backend: the resource that
    /// holds it (one little-endian RGBA8 word per pixel, sRGB with straight alpha, top row
    /// first: [`Simulation::render`]'s bytes) and its size in pixels. A renderer on the
    /// backend's own device draws it from there without a copy (the wgpu backend's
    /// `field_buffer`), valid until the next step or frame. `None` where the frame is composed
    /// on the host (see [`Simulation::render`]).
    pub fn render_on_device(&mut self) -> Result<Option<(swirly_ir::ResourceId, (u32, u32))>> {
        self.scene.check_render()?;
        let (renderer, shot) = self.shot();
        renderer.render_on_device(shot)
    }

    /// [`Simulation::render`] composed on the host from the downloaded fields
    /// ([`crate::render::RenderSpec::compose`]): the reference the render kernels are held to.
    /// Its trails are the kernels' too: a simulation drawn both ways keeps neither's trails
    /// whole.
    pub fn render_reference(&mut self) -> Result<Vec<u8>> {
        self.scene.check_render()?;
        let (renderer, shot) = self.shot();
        renderer.render_reference(shot)
    }

    /// Save the state to `w` as a checkpoint ([`crate::checkpoint`] gives the format): the
    /// scene, time, step count, queued splats and every state resource. On a GPU backend it
    /// waits for the steps queued so far.
    ///
    /// ```
    /// use swirly_core::{Scene, Simulation};
    /// # fn main() -> swirly_core::Result<()> {
    /// # let scene = Scene::from_toml("[grid]\nnx = 32\nny = 32", "a small box")?;
    /// # let mut sim = Simulation::new(scene, swirly_cpu::CpuBackend::new()?)?;
    /// sim.step(1.0 / 60.0)?;
    /// let mut bytes = Vec::new();
    /// sim.save(&mut bytes)?;
    /// let mut again = Simulation::load(bytes.as_slice(), swirly_cpu::CpuBackend::new()?)?;
    /// assert_eq!((again.steps(), again.field("density")?), (sim.steps(), sim.field("density")?));
    /// # Ok(()) }
    /// ```
    pub fn save(&mut self, w: &mut dyn std::io::Write) -> Result<()> {
        use crate::checkpoint::{Header, state_resources, stored};
        let header = Header {
            model: self.model.family().to_string(),
            time: self.time,
            steps: self.steps,
            last_dt: self.last_dt,
            saved_by: self.backend.name().to_string(),
            queued: self.pending.clone(),
            resources: state_resources(self.model.resources()).into_iter().map(|(_, r)| stored(r)).collect(),
            scene: self.scene.clone(),
        };
        crate::checkpoint::write(w, &header, self.model.resources(), &mut self.backend)
    }

    /// A simulation restored from a checkpoint [`Simulation::save`] wrote, on `backend` (any
    /// backend: a checkpoint saved on one restores on another). A file that is damaged,
    /// truncated, of another version, or whose resources do not match its scene is refused
    /// with [`Error::Checkpoint`] saying which.
    pub fn load(r: impl std::io::Read, backend: B) -> Result<Simulation<B>> {
        // The whole file is checked before anything is allocated on the backend.
        let (header, mut reader) = crate::checkpoint::read_header(r)?;
        let model = header.scene.model()?;
        if model.family() != header.model {
            return Err(Error::Checkpoint {
                problem: format!("it holds the `{}` model, and its scene runs `{}`", header.model, model.family()),
            });
        }
        crate::checkpoint::check_matches(&header, model.resources())?;
        check_budget(&header.scene, model.as_ref(), &backend, "a checkpoint keeps its grid")?;
        let mut values = Vec::with_capacity(header.resources.len());
        for s in &header.resources {
            values.push(reader.resource(s)?);
        }
        reader.finish()?;
        let mut sim = Simulation::with_model(header.scene.clone(), model, backend)?;
        let ids = crate::checkpoint::state_resources(sim.model.resources());
        for ((id, _), bytes) in ids.iter().zip(&values) {
            sim.backend.write(*id, bytes)?;
        }
        sim.model.restored(&mut sim.backend)?;
        for splat in &header.queued {
            sim.splat(*splat)?;
        }
        sim.time = header.time;
        sim.steps = header.steps;
        sim.last_dt = header.last_dt;
        Ok(sim)
    }

    /// The scene.
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// The box the model lives in (cells, their side, the sides).
    pub fn frame(&self) -> &Frame {
        self.model.frame()
    }

    /// The model that runs the scene (its resources: [`Model::resources`]).
    pub fn model(&self) -> &dyn Model {
        self.model.as_ref()
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
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Pressure iterations (sweeps, SOR iterations or V-cycles) the last step used: the
    /// configured count, or fewer when `params.pressure.tolerance` stopped the solve early.
    pub fn last_iterations(&self) -> u32 {
        self.model.last_iterations()
    }
}

/// An error unless `model` (of `scene`) fits the scene's budget on `backend` as it is (`why`
/// says why it cannot be downscaled).
fn check_budget(scene: &Scene, model: &dyn Model, backend: &dyn Backend, why: &str) -> Result<()> {
    let Some(budget) = scene.storage.budget else { return Ok(()) };
    let plan = crate::storage::MemoryPlan::new(model.resources(), &model.schedules(), backend);
    crate::storage::check_within(&plan, budget, || {
        format!("{}x{} on {}; {why}", scene.grid.nx, scene.grid.ny, backend.name())
    })
}

impl<B: Backend> Simulation<B> {
    /// A new simulation of `log`'s scene on `backend`, given every input in order: on the CPU
    /// backend the state the recorded session reached, bit for bit. An input the simulation
    /// refuses stops the replay with its error, naming the input's position.
    pub fn replay(log: &InputLog, backend: B) -> Result<Simulation<B>> {
        let mut sim = Simulation::new(log.scene.clone(), backend)?;
        for (k, input) in log.inputs.iter().enumerate() {
            let done = match input {
                Input::Splat { splat } => sim.splat(*splat),
                Input::Step { dt } => sim.step(*dt),
                Input::SetScene { scene } => sim.set_scene((**scene).clone()),
                Input::SetField { field, values } => sim.set_field(field, values),
                Input::Reset => sim.reset(),
                Input::SetObstacle { index, position, angle, velocity, angular_velocity } => sim.set_obstacle(
                    *index,
                    Pose { position: *position, angle: *angle },
                    Motion { velocity: *velocity, angular_velocity: *angular_velocity },
                ),
            };
            done.map_err(|e| Error::invalid(format!("inputs.{k}"), input.kind(), format!("the replay stops: {e}")))?;
        }
        Ok(sim)
    }
}
