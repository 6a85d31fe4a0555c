//! The grid fluid as a [`Model`]: its resources ([`GridFields`]), its schedules (built once per
//! scene, [`crate::grid::step`]), the solve that stops at a tolerance, and its diagnostics.

use std::any::Any;

use crate::frame::solid::{KeyPath, Motion, Obstacle, Pose};
use crate::frame::solid_set::SolidSet;
use crate::grid::initial::Initial;
use crate::grid::params::{PressureSolver, SimParams};
use crate::grid::step::{self, SLOT_MAX_DIVERGENCE, SLOT_RESIDUAL_SQ, SLOT_RHS_SQ, SLOT_STATE_MAX, STATE_FIELDS};
use crate::grid::{FieldId, Frame, Grid, GridFields};
use crate::model::{Diagnostics, FieldInfo, Fit, Model, Solids};
use crate::splat::{Splat, SplatSpec};
use crate::storage::Storage;
use swirly_ir::backend::{Backend, StepInputs};
use swirly_ir::resource::{ResourceDesc, ResourceId};
use swirly_ir::schedule::Schedule;
use swirly_ir::{Error, Result};

/// What the grid fluid is made from: a scene's grid, parameters, obstacles, initial
/// conditions, splats and storage, checked (the scene's `grid_setup`).
#[derive(Clone, Debug, PartialEq)]
pub struct GridSetup {
    /// The grid.
    pub grid: Grid,
    /// The parameters.
    pub params: SimParams,
    /// The obstacles in world units, and the keyframed paths some follow.
    pub obstacles: Vec<Obstacle>,
    /// Each obstacle's path, if it follows one.
    pub paths: Vec<Option<KeyPath>>,
    /// The initial conditions.
    pub initial: Initial,
    /// Splats applied every step, amounts per second.
    pub emitters: Vec<SplatSpec>,
    /// Splats applied once before the first step.
    pub splats: Vec<SplatSpec>,
    /// How the fields are stored.
    pub storage: Storage,
}

/// The schedules of a step whose solve stops at a tolerance.
#[derive(Debug)]
struct Split {
    before: Schedule,
    after: Schedule,
    residual: Schedule,
    /// The solve's chunks by (iterations, warm).
    chunks: Vec<((u32, bool), Schedule)>,
}

impl Split {
    /// The split schedules of a scene whose pressure solve has a tolerance, else `None`.
    fn for_params(grid: &Grid, params: &SimParams) -> Option<Split> {
        params.pressure.tolerance.map(|_| {
            let (before, after) = step::step_split(grid, params);
            Split { before, after, residual: step::residual(grid), chunks: Vec::new() }
        })
    }
}

/// The Eulerian grid fluid (smoke, ink).
#[derive(Debug)]
pub struct GridModel {
    setup: GridSetup,
    fields: GridFields,
    step: Schedule,
    diagnostics: Schedule,
    state: Schedule,
    curl: Schedule,
    split: Option<Split>,
    last_iterations: u32,
    /// The obstacles, their paths and their table.
    solids: SolidSet,
}

/// Most dispatches one step records. A GPU backend's driver holds a few kilobytes for each
/// dispatch it is given (on lavapipe about 4 KB through wgpu, 3 KB through Vulkan), so a step
/// of this many takes about a gigabyte; a solve that must converge on a large grid wants
/// multigrid (a few V-cycles) rather than more sweeps.
pub const MAX_DISPATCHES: usize = 250_000;

impl GridModel {
    /// The model of `setup`; a step of more than [`MAX_DISPATCHES`] dispatches is refused,
    /// naming the iterations that make it.
    pub fn new(setup: GridSetup) -> Result<GridModel> {
        let grid = setup.grid;
        let solids = SolidSet::new(setup.obstacles.clone(), &setup.paths, FieldId::Obstacles.into());
        let stepping = step::step(&grid, &setup.params);
        let dispatches = stepping.dispatches().count();
        if dispatches > MAX_DISPATCHES {
            let (pr, p) = (setup.params.pressure, &setup.params);
            let why = format!(
                "with the {:?} solver and params.viscosity_iterations = {} a step would record {dispatches} \
                 dispatches on this {}x{} grid, and a step records at most {MAX_DISPATCHES} (GPU drivers hold a few \
                 kilobytes for each): ask for fewer, or solve with multigrid, which needs few",
                pr.solver, p.viscosity_iterations, grid.nx, grid.ny
            );
            return Err(Error::invalid("params.pressure.iterations", pr.iterations, why));
        }
        Ok(GridModel {
            fields: GridFields::declare_with(&grid, &setup.params, solids.obstacles()).stored(&setup.storage),
            solids,
            step: stepping,
            diagnostics: step::diagnostics(&grid),
            state: step::state_check(&grid),
            curl: step::curl(&grid),
            split: Split::for_params(&grid, &setup.params),
            last_iterations: setup.params.pressure.iterations,
            setup,
        })
    }

    /// The relative residual ‖b − A p‖ / ‖b‖ of reduction results `r`: NaN when the state is,
    /// 0 only for a right-hand side that is truly zero.
    fn relative_residual(r: &[f64]) -> f64 {
        let rhs = r[SLOT_RHS_SQ].sqrt();
        if rhs > 0.0 || rhs.is_nan() { r[SLOT_RESIDUAL_SQ].sqrt() / rhs } else { 0.0 }
    }

    /// The maxima of the state's fields from reduction results `r` (NaN for a missing one).
    fn maxima(r: &[f64]) -> Vec<(&'static str, f64)> {
        STATE_FIELDS
            .iter()
            .enumerate()
            .map(|(k, f)| (f.name(), r.get(SLOT_STATE_MAX + k).copied().unwrap_or(f64::NAN)))
            .collect()
    }

    fn figures_of(&self, r: &[f64], dt: f32) -> Diagnostics {
        Diagnostics::from_maxima(Self::maxima(r), &["u", "v"], dt, self.setup.grid.h)
    }

    /// The field `name` if the grid has it, else an error naming it and saying why not.
    fn field(&self, name: &str) -> Result<FieldId> {
        let known = || Model::fields(self).iter().map(|f| f.name).collect::<Vec<_>>().join(", ");
        let Ok(field) = FieldId::parse(name) else {
            if matches!(name, "positions" | "velocities") {
                let why = format!("only a particle scene (one with a [particles] section) has {name}");
                return Err(Error::invalid("field", name, why));
            }
            return Err(Error::UnknownField { name: name.to_string(), known: known() });
        };
        if !self.fields.has(field) {
            let why = match field {
                FieldId::Solid | FieldId::UFaces | FieldId::VFaces => {
                    "the scene has no obstacles (add [[obstacles]] to it)".into()
                }
                _ => {
                    self.setup.params.fields.not_carried(field).unwrap_or_else(|| "the scene does not carry it".into())
                }
            };
            return Err(Error::invalid("field", field.name(), why));
        }
        Ok(field)
    }
}

impl Model for GridModel {
    fn family(&self) -> &'static str {
        "grid"
    }

    fn frame(&self) -> &Frame {
        &self.setup.grid.frame
    }

    fn fields(&self) -> Vec<FieldInfo> {
        let grid = &self.setup.grid;
        FieldId::public()
            .filter(|f| self.fields.has(*f))
            .map(|f| FieldInfo { name: f.name(), lattice: grid.lattice(f), channels: f.channels() })
            .collect()
    }

    fn uniform(&self) -> [u8; swirly_ir::schedule::UNIFORM_BYTES] {
        self.setup.grid.uniform_bytes()
    }

    fn resources(&self) -> &[ResourceDesc] {
        self.fields.resources()
    }

    fn schedules(&self) -> Vec<Schedule> {
        let (grid, params) = (&self.setup.grid, &self.setup.params);
        let mut all = vec![
            step::initialize(grid, params),
            step::setup(grid, params),
            self.diagnostics.clone(),
            self.state.clone(),
            self.curl.clone(),
        ];
        match &self.split {
            None => all.push(self.step.clone()),
            Some(split) => {
                all.extend([split.before.clone(), split.after.clone(), split.residual.clone()]);
                // The chunks a solve may run: whole checks and the remainder, cold or warm.
                let pr = params.pressure;
                let every = pr.solver.check_every().min(pr.iterations);
                for n in [every, pr.iterations % every].into_iter().filter(|n| *n > 0) {
                    for warm in [false, true] {
                        all.push(step::solve(grid, &pr, n, warm));
                    }
                }
            }
        }
        all
    }

    fn initialize(&mut self, backend: &mut dyn Backend) -> Result<()> {
        let (grid, params) = (&self.setup.grid, &self.setup.params);
        for (field, data) in crate::grid::initial::fields(&self.setup.initial, params, grid) {
            backend.upload(field.into(), &data)?;
        }
        self.solids = SolidSet::new(self.setup.obstacles.clone(), &self.setup.paths, FieldId::Obstacles.into());
        self.solids.write(backend)?;
        let splats: Vec<Splat> = self.setup.splats.iter().map(|s| s.to_splat(grid)).collect();
        let inputs =
            StepInputs { dt: params.dt, records: crate::splat::records(&splats, grid)?, ..StepInputs::default() };
        backend.run(&step::initialize(grid, params), &inputs)?;
        self.last_iterations = params.pressure.iterations;
        Ok(())
    }

    fn step(&mut self, backend: &mut dyn Backend, inputs: &StepInputs, splats: &[Splat]) -> Result<()> {
        self.solids.follow(backend, inputs.time, inputs.dt)?;
        let grid = self.setup.grid;
        let inputs = &inputs.with_records(crate::splat::records(splats, &grid)?);
        let pr = self.setup.params.pressure;
        let (Some(split), Some(tolerance)) = (self.split.as_mut(), pr.tolerance) else {
            backend.run(&self.step, inputs)?;
            self.last_iterations = pr.iterations;
            return Ok(());
        };
        backend.run(&split.before, inputs)?;
        let mut done = 0;
        while done < pr.iterations {
            // The relaxation's pressure is this step's correction: it starts from zero.
            let warm = done > 0 || (pr.warm_start && pr.solver != PressureSolver::Relaxation);
            let key = (pr.solver.check_every().min(pr.iterations - done), warm);
            let chunk = match split.chunks.iter().position(|(k, _)| *k == key) {
                Some(i) => &split.chunks[i].1,
                None => {
                    split.chunks.push((key, step::solve(&grid, &pr, key.0, key.1)));
                    &split.chunks[split.chunks.len() - 1].1
                }
            };
            backend.run(chunk, inputs)?;
            done += key.0;
            backend.run(&split.residual, inputs)?;
            if GridModel::relative_residual(&backend.reductions()?) <= f64::from(tolerance) {
                break;
            }
        }
        backend.run(&split.after, inputs)?;
        self.last_iterations = done;
        Ok(())
    }

    fn last_iterations(&self) -> u32 {
        self.last_iterations
    }

    fn diagnostics(&mut self, backend: &mut dyn Backend, inputs: &StepInputs) -> Result<Diagnostics> {
        backend.run(&self.diagnostics, inputs)?;
        let r = backend.reductions()?;
        Ok(Diagnostics {
            figures: vec![("max_divergence", r[SLOT_MAX_DIVERGENCE]), ("residual", GridModel::relative_residual(&r))],
            ..self.figures_of(&r, inputs.dt)
        })
    }

    fn state_maxima(&mut self, backend: &mut dyn Backend, inputs: &StepInputs) -> Result<Diagnostics> {
        backend.run(&self.state, inputs)?;
        let r = backend.reductions()?;
        Ok(Diagnostics {
            figures: vec![("max_divergence", f64::NAN), ("residual", f64::NAN)],
            ..self.figures_of(&r, inputs.dt)
        })
    }

    fn check_field(&self, name: &str) -> Result<()> {
        self.field(name).map(|_| ())
    }

    fn readable(&mut self, backend: &mut dyn Backend, name: &str, inputs: &StepInputs) -> Result<ResourceId> {
        let field = self.field(name)?;
        if field == FieldId::Curl {
            // The step keeps it only as scratch of vorticity confinement.
            backend.run(&self.curl, inputs)?;
        }
        Ok(field.into())
    }

    fn check_writable(&self, name: &str) -> Result<()> {
        self.field(name).map(|_| ())
    }

    fn written(&mut self, backend: &mut dyn Backend, name: &str) -> Result<()> {
        if name == FieldId::Pressure.name() {
            // The pressure is now exactly the values written: drop the low part of the old one.
            backend.upload(FieldId::PressureLo.into(), &vec![0.0; self.setup.grid.len(FieldId::PressureLo)])?;
        }
        Ok(())
    }

    fn adopt(&mut self, next: Box<dyn Model>, backend: &mut dyn Backend) -> Result<()> {
        let family = next.family();
        let Ok(next) = next.into_any().downcast::<GridModel>() else {
            return Err(Error::invalid(
                "scene",
                family,
                "a running simulation keeps its model (the grid fluid): build a new Simulation for another",
            ));
        };
        let GridModel { setup, fields, solids, step, split, .. } = *next;
        let grid = setup.grid;
        // Obstacles and the sides' kinds may change (the schedules follow); the box stays.
        let old = self.setup.grid;
        let frame = Frame { sides: old.sides, ..grid.frame };
        if (Grid { frame, solids: old.solids, held: old.held, ..grid }) != old {
            let show = |g: &Grid| format!("{}x{}, h {}, {:?} x {:?}", g.nx, g.ny, g.h, g.boundary_x, g.boundary_y);
            return Err(Error::invalid(
                "grid",
                show(&grid),
                format!(
                    "a running simulation keeps its grid ({}): build a new Simulation for another size, cell size or boundary",
                    show(&old)
                ),
            ));
        }
        let formats = |s: &GridSetup| (s.storage.format, s.storage.fields);
        if formats(&setup) != formats(&self.setup) {
            return Err(Error::invalid(
                "storage.format",
                format!("{:?}", formats(&setup)),
                format!(
                    "a running simulation keeps the formats its fields are stored in ({:?}): build a new Simulation \
                     to store them otherwise",
                    formats(&self.setup)
                ),
            ));
        }
        // Fields the new scene adds start at zero; those it drops are freed. Obstacles on a
        // path take their leg at the next step.
        backend.allocate(fields.resources())?;
        let moved = solids.obstacles() != self.solids.obstacles();
        self.solids = solids;
        let params = &setup.params;
        if moved || fields != self.fields || grid.sides != old.sides {
            self.solids.write(backend)?;
            // The faces until the next step rasterises them where they stand then.
            let inputs = StepInputs { dt: params.dt, ..StepInputs::default() };
            backend.run(&step::solids(&grid, params), &inputs)?;
        }
        let (was, now) = (&self.setup.params.pressure, &params.pressure);
        if was.solver != now.solver || was.precision != now.precision {
            // Only the double-float solvers write the low part; the others read it as given.
            backend.upload(FieldId::PressureLo.into(), &vec![0.0; grid.len(FieldId::PressureLo)])?;
        }
        let solver_setup = step::setup(&grid, params);
        if solver_setup.dispatches().next().is_some() && (was != now || fields != self.fields) {
            // What the new solver needs written before its first solve (the filter's taps).
            backend.run(&solver_setup, &StepInputs { dt: params.dt, ..StepInputs::default() })?;
        }
        self.split = split;
        self.step = step;
        if grid != old {
            self.diagnostics = step::diagnostics(&grid);
            self.state = step::state_check(&grid);
            self.curl = step::curl(&grid);
        }
        self.fields = fields;
        self.setup = setup;
        Ok(())
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }

    fn emitters(&self, dt: f32) -> Vec<Splat> {
        crate::splat::emitted(&self.setup.emitters, &self.setup.grid, dt)
    }

    fn emitter_count(&self) -> usize {
        self.setup.emitters.len()
    }

    fn carried(&self, splat: Splat) -> Splat {
        self.setup.params.fields.carried(splat)
    }

    fn check_splat(&self, splat: &Splat) -> Result<()> {
        let fields = &self.setup.params.fields;
        for (amount, field, key) in [
            ((splat.density != 0.0).then(|| splat.density.to_string()), FieldId::Density, "splat.density"),
            (
                (splat.temperature != 0.0).then(|| splat.temperature.to_string()),
                FieldId::Temperature,
                "splat.temperature",
            ),
            ((splat.dye != [0.0; 4]).then(|| format!("{:?}", splat.dye)), FieldId::Dye, "splat.dye"),
        ] {
            if let (Some(amount), Some(why)) = (amount, fields.not_carried(field)) {
                return Err(Error::invalid(key, amount, format!("{why}, so the amount would be lost")));
            }
        }
        Ok(())
    }

    fn obstacles(&self) -> &[Obstacle] {
        self.solids.obstacles()
    }

    fn set_obstacle(
        &mut self,
        backend: &mut dyn Backend,
        index: usize,
        pose: Pose,
        motion: Motion,
        now: f32,
    ) -> Result<()> {
        self.solids.set(backend, index, pose, motion, now)
    }

    fn restored(&mut self, backend: &mut dyn Backend) -> Result<()> {
        self.solids.restored(backend)
    }

    fn fit(&self) -> Fit {
        Fit::Downscale
    }

    fn cell_velocities(
        &mut self,
        backend: &mut dyn Backend,
        _inputs: &StepInputs,
    ) -> Result<(Vec<[f32; 2]>, Vec<f32>)> {
        // Each cell's velocity: the mean of its two faces, over the whole box.
        let (nx, ny) = (self.setup.grid.nx as usize, self.setup.grid.ny as usize);
        let (u, v) = (backend.download(FieldId::U.into())?, backend.download(FieldId::V.into())?);
        let cells: Vec<[f32; 2]> = (0..nx * ny)
            .map(|c| {
                let (i, j) = (c % nx, c / nx);
                [0.5 * (u[j * (nx + 1) + i] + u[j * (nx + 1) + i + 1]), 0.5 * (v[j * nx + i] + v[(j + 1) * nx + i])]
            })
            .collect();
        Ok((cells, vec![1.0; nx * ny]))
    }

    fn solids(&mut self, _backend: &mut dyn Backend, _inputs: &StepInputs) -> Result<Solids> {
        Ok(if !self.setup.grid.solids {
            Solids::None
        } else if self.fields.has(FieldId::Solid) {
            Solids::Held(FieldId::Solid.into())
        } else {
            Solids::Rasterised
        })
    }

    fn bytes_per_step(&self) -> u64 {
        step::bytes_moved(&self.step, &self.setup.grid)
    }

    fn draws_velocity(&self) -> bool {
        true
    }
}
