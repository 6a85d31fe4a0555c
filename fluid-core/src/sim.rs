//! [`Simulation`]: a scene's model on a backend, stepped, read, sampled and checked. It runs any
//! [`Model`]; what the grid fluid adds (its diagnostics, its fields) it reaches through the
//! model's trait.

use crate::backend::{Backend, PendingRead, StepInputs};
use crate::grid::solid::{Motion, Obstacle, Pose};
use crate::grid::{FieldId, Grid, SamplePlan};
use crate::model::Model;
use crate::params::SimParams;
use crate::render::RenderField;
use crate::replay::{Input, InputLog};
use crate::scene::Scene;
use crate::splat::Splat;
use crate::{Error, Result};

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
    /// Values live when asked (the particles' room past them is not handed over).
    live: Option<usize>,
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

/// A running simulation: a scene's model on a backend.
pub struct Simulation<B: Backend = Box<dyn Backend>> {
    model: Box<dyn Model>,
    backend: B,
    pending: Vec<Splat>,
    time: f32,
    steps: u64,
    last_dt: f32,
    recording: Option<InputLog>,
    downscaled_from: Option<[u32; 2]>,
    last_substeps: u32,
    trails: crate::render::Trails,
    /// The picture's backdrop ([`crate::render::RenderSpec::backdrop`]) and what it was made
    /// of (image, background colour, picture size).
    backdrop: Option<(Backdrop, Vec<[f32; 4]>)>,
    /// Whether the render kernels' copy of the backdrop is current.
    backdrop_on_device: bool,
}

/// What a backdrop is made of: the image's path, the background colour, the picture's size.
type Backdrop = (String, [u8; 4], (u32, u32));

impl<B: Backend> std::fmt::Debug for Simulation<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulation")
            .field("scene", &self.model.scene().name)
            .field("model", &self.model.family())
            .field("grid", self.model.grid())
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
    pub fn new(scene: Scene, backend: B) -> Result<Simulation<B>> {
        if scene.storage.budget.is_none() {
            return Simulation::with_model(model_for(scene)?, backend);
        }
        let (fitted, model) = crate::storage::fit(&scene, &backend)?;
        let mut sim = Simulation::with_model(model, backend)?;
        sim.downscaled_from = fitted.downscaled_from;
        Ok(sim)
    }

    /// The grid `[nx, ny]` the scene asked for, when its budget made [`Simulation::new`] run a
    /// smaller one, or a coarser dye (this simulation's grid says what runs).
    pub fn downscaled_from(&self) -> Option<[u32; 2]> {
        self.downscaled_from
    }

    fn with_model(mut model: Box<dyn Model>, mut backend: B) -> Result<Simulation<B>> {
        backend.allocate(model.resources())?;
        model.initialize(&mut backend)?;
        let last_dt = model.scene().params.dt;
        Ok(Simulation {
            model,
            backend,
            pending: Vec::new(),
            time: 0.0,
            steps: 0,
            last_dt,
            recording: None,
            downscaled_from: None,
            last_substeps: 1,
            trails: crate::render::Trails::default(),
            backdrop: None,
            backdrop_on_device: false,
        })
    }

    /// Inputs of a pass that is not a step (reads, diagnostics): the last step's `dt`.
    fn pass_inputs(&self) -> StepInputs {
        StepInputs { dt: self.last_dt, time: self.time, step: self.steps as u32, splats: Vec::new() }
    }

    /// Start again from the scene's initial state, as [`Simulation::new`] would (every field
    /// cleared, the initial conditions and splats applied and projected; time and step count
    /// back to zero, queued splats dropped), keeping the backend's allocation and prepared
    /// work: a game restarting an effect pays no setup.
    pub fn reset(&mut self) -> Result<()> {
        for (i, r) in self.model.resources().iter().enumerate() {
            // Transient resources hold nothing between runs (and refuse writes).
            if !r.is_empty() && r.shares().is_none() {
                self.backend.write(crate::ResourceId(i as u32), &vec![0u8; r.bytes() as usize])?;
            }
        }
        self.model.initialize(&mut self.backend)?;
        self.pending.clear();
        self.time = 0.0;
        self.steps = 0;
        self.last_dt = self.model.scene().params.dt;
        self.last_substeps = 1;
        self.trails.clear();
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
        self.recording = Some(InputLog::new(self.model.scene().clone()));
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

    /// Queue a splat (world units: the box is [`Grid::width`] × [`Grid::height`]) for the
    /// next step. Its numbers must be finite and its radius > 0 (an error names the value). It
    /// may reach past the box: along a wall the part outside adds nothing, so one wholly
    /// outside (a pointer dragged off the picture) changes nothing; along a periodic axis it
    /// wraps round, from any distance. An amount for a field the scene does not carry
    /// (`params.fields`) is an error naming it: nothing would hold it.
    pub fn splat(&mut self, splat: Splat) -> Result<()> {
        splat.validate("splat")?;
        self.model.check_splat(&splat)?;
        let queued = self.pending.len() + self.model.scene().emitters.len();
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
            let inputs = StepInputs { dt: sub, time: self.time + k as f32 * sub, step: self.steps as u32, splats };
            self.model.step(&mut self.backend, &inputs)?;
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
        let params = &self.model.scene().params;
        let (Some(cfl), most) = (params.cfl, params.max_substeps) else { return Ok(1) };
        let h = self.model.grid().h;
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

    /// The resource that holds `field` now (derived fields such as `curl` brought up to date).
    fn readable(&mut self, field: FieldId) -> Result<crate::ResourceId> {
        let inputs = self.pass_inputs();
        self.model.readable(&mut self.backend, field, &inputs)
    }

    /// Read a field (see [`crate::grid`] for the layout). On a GPU backend it waits for the
    /// device; [`Simulation::request_field`] does not. `curl` is the vorticity of the current
    /// velocity, computed for the read (the step keeps it only as scratch of vorticity
    /// confinement). A field the scene does not carry (`params.fields`) is an error naming it.
    pub fn field(&mut self, field: FieldId) -> Result<Vec<f32>> {
        let id = self.readable(field)?;
        let mut values = self.backend.download(id)?;
        if let Some(n) = self.live_len(field) {
            values.truncate(n);
        }
        Ok(values)
    }

    /// Values of `field` that are live, where the resource holds room past them: a particle
    /// liquid's emitters fill its buffers as it runs.
    fn live_len(&self, field: FieldId) -> Option<usize> {
        (field.kind() == crate::grid::FieldKind::Particles).then(|| self.model.grid().len(field))
    }

    /// Fill the `curl` field with the vorticity `∂v/∂x − ∂u/∂y` of the current velocity. Every
    /// read of `curl` through the simulation does this itself; call it before drawing the
    /// backend's curl buffer directly (`WgpuBackend::field_buffer`, `VulkanBackend::field_buffer`).
    /// Queued behind the steps so far; it does not wait.
    pub fn compute_curl(&mut self) -> Result<()> {
        self.readable(FieldId::Curl).map(|_| ())
    }

    /// Bilinear samples of a public field at world positions, e.g. the smoke density where a
    /// game character stands: one value per point, four (RGBA) for dye. One read-back for all
    /// the points, of only the values they interpolate ([`Backend::download_at`]; on a GPU
    /// backend it waits for the device, and for the steps still queued: a game sampling every
    /// frame wants [`Simulation::request_sample`], which does not). Points outside the box are
    /// an error naming them; see [`Grid::sample`], whose results these equal bit for bit.
    pub fn sample(&mut self, field: FieldId, points: &[[f32; 2]]) -> Result<Vec<f32>> {
        let grid = *self.model.grid();
        grid.sample_with(field, points, |indices| {
            let id = self.readable(field)?;
            self.backend.download_at(id, indices)
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
    /// # fn main() -> fluid_core::Result<()> {
    /// # fn example<B: fluid_core::Backend>(mut sim: fluid_core::sim::Simulation<B>) -> fluid_core::Result<()> {
    /// let mut asked = sim.request_sample(fluid_core::FieldId::Density, &[[0.5, 0.3]])?;
    /// sim.step(1.0 / 60.0)?; // the next frame
    /// if let Some(density) = sim.poll_sample(&mut asked)? {
    ///     // the density at (0.5, 0.3) before that step
    /// #   let _ = density;
    /// }
    /// # Ok(()) }
    /// # Ok(()) }
    /// ```
    pub fn request_sample(&mut self, field: FieldId, points: &[[f32; 2]]) -> Result<PendingSample> {
        let plan = self.model.grid().sample_plan(field, points)?;
        let id = self.readable(field)?;
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
    pub fn request_field(&mut self, field: FieldId) -> Result<PendingField> {
        let id = self.readable(field)?;
        Ok(PendingField { field, read: self.backend.queue_download(id)?, live: self.live_len(field) })
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
    pub fn carries(&self, field: FieldId) -> bool {
        self.model.has(field)
    }

    /// The obstacles as they stand now (world units and radians), in the scene's order.
    pub fn obstacles(&self) -> Vec<Obstacle> {
        self.model.obstacles().iter().map(|o| o.at(self.time)).collect()
    }

    /// Overwrite a field. Its values must be finite: a NaN or an infinity is refused with the
    /// field's name, the first bad index and its value, since a state fed one only blows up
    /// later. ([`Backend::upload`] on [`Simulation::backend_mut`] takes anything.)
    pub fn set_field(&mut self, field: FieldId, data: &[f32]) -> Result<()> {
        if let Some((k, x)) = data.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            return Err(Error::invalid(format!("{}[{k}]", field.name()), x, "field values must be finite"));
        }
        if field == FieldId::Density && self.model.family() == "particles" {
            return Err(Error::invalid(
                "field",
                field.name(),
                "the particle liquid's density is drawn from its particles: set positions and velocities",
            ));
        }
        let id = self.readable(field)?;
        match self.live_len(field) {
            // The live particles' values, the room past them kept.
            Some(n) if data.len() == n && (n as u64) < self.backend.resources()[id.index()].words() => {
                let mut all = self.backend.download(id)?;
                all[..n].copy_from_slice(data);
                self.backend.upload(id, &all)?;
            }
            _ => self.backend.upload(id, data)?,
        }
        if field == FieldId::Pressure {
            // The pressure is now exactly these values: drop the low part of the old one.
            self.backend.upload(FieldId::PressureLo.into(), &vec![0.0; data.len()])?;
        }
        self.record(|| Input::SetField { field: field.name().to_string(), values: data.to_vec() });
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
        if scene.storage.budget.is_some() {
            check_budget(model_for(scene.clone())?.as_ref(), &self.backend, "a running simulation keeps its grid")?;
        }
        let recorded = self.recording.is_some().then(|| scene.clone());
        self.model.set_scene(scene, &mut self.backend)?;
        if let Some(scene) = recorded {
            self.record(|| Input::SetScene { scene: Box::new(scene) });
        }
        Ok(())
    }

    /// [`Simulation::set_scene`] with only the parameters changed (the emitters and the render
    /// settings stay): for example a stronger vorticity confinement from the next step on.
    pub fn set_params(&mut self, params: SimParams) -> Result<()> {
        let mut scene = self.model.scene().clone();
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
            return Err(Error::NonFinite {
                step: self.steps_u32(),
                fields: bad.iter().map(|f| f.name()).collect::<Vec<_>>().join(", "),
                dt: self.last_dt,
            });
        }
        let grid = self.model.grid();
        if d.ran_away(grid) {
            return Err(Error::RanAway {
                step: self.steps_u32(),
                cfl: d.cfl,
                cells: grid.longest_side(),
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

    /// The current frame as RGBA8 ([`crate::render::RenderSpec::size`] pixels: the dye's at its
    /// own resolution when a layer shows it), top row first, drawn as the scene's `[render]`
    /// says. A field the scene does not carry (`params.fields`, or one of the grid's in a
    /// particle scene) is an error naming the layer ([`Scene::check_render`]).
    ///
    /// The backend draws it with the render kernels ([`crate::render::kernels`]) where the
    /// fields are, so a GPU frame comes back as one copy of the picture. A particle liquid's
    /// velocity and speed views, and a frame whose resources would pass the scene's
    /// `storage.budget`, are composed on the host from the fields instead (the same picture).
    pub fn render(&mut self) -> Result<Vec<u8>> {
        self.model.scene().check_render()?;
        match self.draw_on_backend()? {
            Some(plan) => Ok(crate::backend::u32s_to_le_bytes(&self.backend.read(plan.picture)?)),
            None => self.render_on_host(),
        }
    }

    /// The current frame drawn by the render kernels and left on the backend: the resource that
    /// holds it (one little-endian RGBA8 word per pixel, sRGB with straight alpha, top row
    /// first: [`Simulation::render`]'s bytes) and its size in pixels. A renderer on the
    /// backend's own device draws it from there without a copy (the wgpu backend's
    /// `field_buffer`), valid until the next step or frame. `None` where the frame is composed
    /// on the host (see [`Simulation::render`]).
    pub fn render_on_device(&mut self) -> Result<Option<(crate::ResourceId, (u32, u32))>> {
        self.model.scene().check_render()?;
        Ok(self.draw_on_backend()?.map(|plan| (plan.picture, plan.size)))
    }

    /// Run the render kernels for the current frame, or `None` where the host must compose it.
    fn draw_on_backend(&mut self) -> Result<Option<crate::render::kernels::FramePlan>> {
        use crate::render::kernels::{FramePlan, Solids, Source};
        let spec = self.model.scene().render.clone();
        let inputs = self.pass_inputs();
        let solids = if !self.model.grid().solids {
            Solids::None
        } else if self.model.has(FieldId::Solid) {
            Solids::Held(self.model.readable(&mut self.backend, FieldId::Solid, &inputs)?)
        } else {
            Solids::Uploaded
        };
        let particles = self.model.scene().particles.is_some();
        let mut sources = Vec::new();
        for (k, layer) in spec.effective_layers().iter().enumerate() {
            sources.push(match layer.field {
                RenderField::Velocity | RenderField::Speed if particles => return Ok(None),
                RenderField::Velocity | RenderField::Speed => Source::Faces(
                    self.model.readable(&mut self.backend, FieldId::U, &inputs)?,
                    self.model.readable(&mut self.backend, FieldId::V, &inputs)?,
                ),
                RenderField::Obstacles => Source::Solid,
                field => {
                    let id = self.source(&spec, k, field, &inputs)?;
                    if field == RenderField::Dye { Source::Dye(id) } else { Source::Cells(id) }
                }
            });
        }
        let (grid, ambient) = (*self.model.grid(), self.model.scene().params.buoyancy.ambient_temperature);
        let base = self.model.resources().len() as u32;
        self.refresh_backdrop()?;
        let backdrop = self.backdrop.is_some();
        let Some(plan) = FramePlan::new(&spec, &grid, &sources, solids, ambient, backdrop, base) else {
            return Ok(None);
        };
        let mut all = self.model.resources().to_vec();
        all.extend(plan.resources.iter().cloned());
        if self.backend.resources() != all.as_slice() {
            if let Some(budget) = self.model.scene().storage.budget {
                let mut schedules = self.model.schedules();
                schedules.push(plan.schedule.clone());
                if crate::storage::MemoryPlan::new(&all, &schedules, &self.backend).total() > budget.0 {
                    return Ok(None);
                }
            }
            self.backend.allocate(&all)?;
            self.backdrop_on_device = false;
        }
        if let (Some(id), Some((_, texels))) = (plan.backdrop, &self.backdrop)
            && !self.backdrop_on_device
        {
            self.backend.upload(id, bytemuck::cast_slice(texels))?;
            self.backdrop_on_device = true;
        }
        self.backend.upload(plan.colours.0, &plan.colours.1)?;
        if let Some(id) = plan.solid {
            let solid = if solids == Solids::Uploaded {
                let placed: Vec<_> = self.model.obstacles().iter().map(|o| o.at(self.time)).collect();
                crate::grid::solid::rasterise(&grid, &placed).solid
            } else {
                vec![0.0; grid.cells()]
            };
            self.backend.upload(id, &solid)?;
        }
        let dt = self.trails.advance(self.time).unwrap_or(-1.0);
        self.backend.run(&plan.schedule, &StepInputs { dt, ..inputs })?;
        Ok(Some(plan))
    }

    /// The resource holding layer `k`'s field, brought up to date; an error naming the layer
    /// when the model has no such field.
    fn source(
        &mut self,
        spec: &crate::render::RenderSpec,
        k: usize,
        field: RenderField,
        inputs: &StepInputs,
    ) -> Result<crate::ResourceId> {
        let source = field.source();
        if !self.model.has(source) {
            let why = format!("this scene's {} model has no {} to draw", self.model.family(), source.name());
            return Err(Error::invalid(spec.layer_key(k), source.name(), why));
        }
        self.model.readable(&mut self.backend, source, inputs)
    }

    /// [`Simulation::render`] composed on the host from the downloaded fields
    /// ([`crate::render::RenderSpec::compose`]): the reference the render kernels are held to.
    /// Its trails are kept apart from the kernels': a simulation drawn both ways keeps
    /// neither's trails whole.
    pub fn render_reference(&mut self) -> Result<Vec<u8>> {
        self.model.scene().check_render()?;
        self.render_on_host()
    }

    /// Bring the backdrop in line with the scene's `render` (made again when its image,
    /// background colour or picture size changed).
    fn refresh_backdrop(&mut self) -> Result<()> {
        let spec = &self.model.scene().render;
        let Some(path) = spec.background_image.clone() else {
            self.backdrop = None;
            return Ok(());
        };
        let key = (path, spec.background.0, spec.size(self.model.grid()));
        if self.backdrop.as_ref().is_some_and(|(k, _)| *k == key) {
            return Ok(());
        }
        let texels = spec.backdrop(self.model.grid())?.unwrap_or_default();
        self.backdrop = Some((key, texels));
        self.backdrop_on_device = false;
        Ok(())
    }

    fn render_on_host(&mut self) -> Result<Vec<u8>> {
        self.refresh_backdrop()?;
        let spec = self.model.scene().render.clone();
        let layers = spec.effective_layers();
        let solid = if !self.model.grid().solids {
            None
        } else if self.model.has(FieldId::Solid) {
            Some(self.field(FieldId::Solid)?)
        } else {
            // A model without solid cells (the particle liquid): its obstacles where they
            // stand now, rasterised on the host.
            let placed: Vec<_> = self.model.obstacles().iter().map(|o| o.at(self.time)).collect();
            Some(crate::grid::solid::rasterise(self.model.grid(), &placed).solid)
        };
        let mut data = Vec::with_capacity(layers.len());
        for (k, layer) in layers.iter().enumerate() {
            data.push(match layer.field {
                RenderField::Velocity => {
                    let (cells, coverage) = self.cell_velocities()?;
                    layer.velocity_colours(&cells, &coverage)
                }
                RenderField::Speed => self.cell_velocities()?.0.iter().map(|v| v[0].hypot(v[1])).collect(),
                RenderField::Obstacles => solid.clone().unwrap_or_else(|| vec![0.0; self.model.grid().cells()]),
                field => {
                    let inputs = self.pass_inputs();
                    self.source(&spec, k, field, &inputs)?;
                    self.field(field.source())?
                }
            });
        }
        let inputs: Vec<&[f32]> = data.iter().map(Vec::as_slice).collect();
        let ambient = self.model.scene().params.buoyancy.ambient_temperature;
        let (grid, time) = (*self.model.grid(), self.time);
        let backdrop = self.backdrop.as_ref().map(|(_, t)| t.as_slice());
        Ok(spec.compose_over(backdrop, &grid, &inputs, solid.as_deref(), ambient, Some((&mut self.trails, time))))
    }

    /// The velocity at each cell and how much fluid covers it, for the velocity and speed
    /// views: a grid's velocity at the cell centres (the mean of each cell's two faces), over
    /// the whole box; a liquid's particle velocities averaged about each cell with the
    /// drawing's weights `(1 − r/h)²`, covering it as far as its drawn density.
    fn cell_velocities(&mut self) -> Result<(Vec<[f32; 2]>, Vec<f32>)> {
        let grid = *self.model.grid();
        let (nx, ny) = (grid.nx as usize, grid.ny as usize);
        let Some(spec) = self.model.scene().particles.clone() else {
            let (u, v) = (self.field(FieldId::U)?, self.field(FieldId::V)?);
            let cells: Vec<[f32; 2]> = (0..nx * ny)
                .map(|c| {
                    let (i, j) = (c % nx, c / nx);
                    [0.5 * (u[j * (nx + 1) + i] + u[j * (nx + 1) + i + 1]), 0.5 * (v[j * nx + i] + v[(j + 1) * nx + i])]
                })
                .collect();
            return Ok((cells, vec![1.0; nx * ny]));
        };
        let coverage = self.field(FieldId::Density)?;
        let (x, vel) = (self.field(FieldId::Positions)?, self.field(FieldId::Velocities)?);
        let r = spec.radius_world(&grid);
        let (mut sum, mut weight) = (vec![[0.0f32; 2]; nx * ny], vec![0.0f32; nx * ny]);
        for (p, v) in x.chunks_exact(2).zip(vel.chunks_exact(2)) {
            let span = |c: f32, n: usize| {
                let lo = ((c - r) / grid.h - 0.5).ceil().max(0.0) as usize;
                let hi = (((c + r) / grid.h - 0.5).floor().max(-1.0) + 1.0).min(n as f32) as usize;
                lo..hi.max(lo)
            };
            for j in span(p[1], ny) {
                for i in span(p[0], nx) {
                    let d = ((i as f32 + 0.5) * grid.h - p[0]).hypot((j as f32 + 0.5) * grid.h - p[1]);
                    if d < r {
                        let w = (1.0 - d / r).powi(2);
                        let c = j * nx + i;
                        sum[c] = [sum[c][0] + w * v[0], sum[c][1] + w * v[1]];
                        weight[c] += w;
                    }
                }
            }
        }
        let cells: Vec<[f32; 2]> =
            sum.iter().zip(&weight).map(|(s, w)| if *w > 0.0 { [s[0] / w, s[1] / w] } else { [0.0; 2] }).collect();
        Ok((cells, coverage))
    }

    /// Save the state to `w` as a checkpoint ([`crate::checkpoint`] gives the format): the
    /// scene, time, step count, queued splats and every state resource. On a GPU backend it
    /// waits for the steps queued so far.
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
            scene: self.model.scene().clone(),
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
        let model = model_for(header.scene.clone())?;
        if model.family() != header.model {
            return Err(Error::Checkpoint {
                problem: format!("it holds the `{}` model, and its scene runs `{}`", header.model, model.family()),
            });
        }
        crate::checkpoint::check_matches(&header, model.resources())?;
        check_budget(model.as_ref(), &backend, "a checkpoint keeps its grid")?;
        let mut values = Vec::with_capacity(header.resources.len());
        for s in &header.resources {
            values.push(reader.resource(s)?);
        }
        reader.finish()?;
        let mut sim = Simulation::with_model(model, backend)?;
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
        self.model.scene()
    }

    /// The grid.
    pub fn grid(&self) -> &Grid {
        self.model.grid()
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

    /// Steps taken as the errors name them, at most `u32::MAX`.
    fn steps_u32(&self) -> u32 {
        u32::try_from(self.steps).unwrap_or(u32::MAX)
    }

    /// Pressure iterations (sweeps, SOR iterations or V-cycles) the last step used: the
    /// configured count, or fewer when `params.pressure.tolerance` stopped the solve early.
    pub fn last_iterations(&self) -> u32 {
        self.model.last_iterations()
    }
}

/// An error unless `model`'s scene fits its budget on `backend` as it is (`why` says why it
/// cannot be downscaled).
fn check_budget(model: &dyn Model, backend: &dyn Backend, why: &str) -> Result<()> {
    let scene = model.scene();
    let Some(budget) = scene.storage.budget else { return Ok(()) };
    let plan = crate::storage::MemoryPlan::new(model.resources(), &model.schedules(), backend);
    crate::storage::check_within(&plan, budget, || {
        format!("{}x{} on {}; {why}", scene.grid.nx, scene.grid.ny, backend.name())
    })
}

/// The model that runs `scene`: the particle liquid when it has a `[particles]` section, else
/// the grid fluid.
pub(crate) fn model_for(scene: Scene) -> Result<Box<dyn Model>> {
    if scene.particles.is_some() {
        return Ok(Box::new(crate::particles::model::ParticleModel::new(scene)?));
    }
    Ok(Box::new(crate::grid::model::GridModel::new(scene)?))
}
