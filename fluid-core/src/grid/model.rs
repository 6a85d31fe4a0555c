//! The grid fluid as a [`Model`]: its resources ([`GridFields`]), its schedules (built once per
//! scene, [`crate::grid::step`]), the solve that stops at a tolerance, and its diagnostics.

use crate::backend::{Backend, StepInputs};
use crate::grid::solid::{Motion, Obstacle, Pose};
use crate::grid::solid_set::SolidSet;
use crate::grid::step::{self, SLOT_MAX_DIVERGENCE, SLOT_RESIDUAL_SQ, SLOT_RHS_SQ, SLOT_STATE_MAX, STATE_FIELDS};
use crate::grid::{FieldId, Grid, GridFields};
use crate::ir::resource::{ResourceDesc, ResourceId};
use crate::ir::schedule::Schedule;
use crate::model::Diagnostics;
use crate::model::Model;
use crate::params::{PressureSolver, SimParams};
use crate::scene::Scene;
use crate::splat::Splat;
use crate::{Error, Result};

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
    scene: Scene,
    grid: Grid,
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

impl GridModel {
    /// The model of a checked `scene`.
    pub fn new(scene: Scene) -> Result<GridModel> {
        scene.validate()?;
        let grid = scene.grid()?;
        let solids = SolidSet::new(&scene, FieldId::Obstacles.into())?;
        Ok(GridModel {
            fields: GridFields::declare_with(&grid, &scene.params, solids.obstacles()).stored(&scene.storage),
            solids,
            step: step::step(&grid, &scene.params),
            diagnostics: step::diagnostics(&grid),
            state: step::state_check(&grid),
            curl: step::curl(&grid),
            split: Split::for_params(&grid, &scene.params),
            last_iterations: scene.params.pressure.iterations,
            grid,
            scene,
        })
    }

    /// Its resources, by field.
    pub fn fields(&self) -> &GridFields {
        &self.fields
    }

    /// The relative residual ‖b − A p‖ / ‖b‖ of reduction results `r`: NaN when the state is,
    /// 0 only for a right-hand side that is truly zero.
    fn relative_residual(r: &[f64]) -> f64 {
        let rhs = r[SLOT_RHS_SQ].sqrt();
        if rhs > 0.0 || rhs.is_nan() { r[SLOT_RESIDUAL_SQ].sqrt() / rhs } else { 0.0 }
    }

    fn state_max(r: &[f64]) -> [f64; STATE_FIELDS.len()] {
        std::array::from_fn(|k| r.get(SLOT_STATE_MAX + k).copied().unwrap_or(f64::NAN))
    }
}

impl Model for GridModel {
    fn family(&self) -> &'static str {
        "grid"
    }

    fn scene(&self) -> &Scene {
        &self.scene
    }

    fn grid(&self) -> &Grid {
        &self.grid
    }

    fn resources(&self) -> &[ResourceDesc] {
        self.fields.resources()
    }

    fn schedules(&self) -> Vec<Schedule> {
        let params = &self.scene.params;
        let mut all = vec![
            step::initialize(&self.grid, params),
            step::setup(&self.grid, params),
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
                        all.push(step::solve(&self.grid, &pr, n, warm));
                    }
                }
            }
        }
        all
    }

    fn initialize(&mut self, backend: &mut dyn Backend) -> Result<()> {
        for (field, data) in self.scene.initial_fields(&self.grid) {
            backend.upload(field.into(), &data)?;
        }
        self.solids = SolidSet::new(&self.scene, FieldId::Obstacles.into())?;
        self.solids.write(backend)?;
        let params = &self.scene.params;
        let splats = crate::splat::records(&self.scene.initial_splats(&self.grid), &self.grid)?;
        let inputs = StepInputs { dt: params.dt, records: splats, ..StepInputs::default() };
        backend.run(&step::initialize(&self.grid, params), &inputs)?;
        self.last_iterations = params.pressure.iterations;
        Ok(())
    }

    fn step(&mut self, backend: &mut dyn Backend, inputs: &StepInputs, splats: &[Splat]) -> Result<()> {
        self.solids.follow(backend, inputs.time, inputs.dt)?;
        let inputs = &inputs.with_records(crate::splat::records(splats, &self.grid)?);
        let pr = self.scene.params.pressure;
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
                    split.chunks.push((key, step::solve(&self.grid, &pr, key.0, key.1)));
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
            max_divergence: r[SLOT_MAX_DIVERGENCE],
            residual: GridModel::relative_residual(&r),
            ..Diagnostics::from_state(GridModel::state_max(&r), inputs.dt, self.grid.h)
        })
    }

    fn state_maxima(&mut self, backend: &mut dyn Backend, inputs: &StepInputs) -> Result<Diagnostics> {
        backend.run(&self.state, inputs)?;
        let r = backend.reductions()?;
        Ok(Diagnostics::from_state(GridModel::state_max(&r), inputs.dt, self.grid.h))
    }

    fn readable(&mut self, backend: &mut dyn Backend, field: FieldId, inputs: &StepInputs) -> Result<ResourceId> {
        if !field.is_public() {
            return Err(Error::invalid("field", field.name(), "only the public fields can be read"));
        }
        if !self.fields.has(field) {
            let why = match field {
                FieldId::Solid | FieldId::UFaces | FieldId::VFaces => {
                    "the scene has no obstacles (add [[obstacles]] to it)".into()
                }
                _ => {
                    self.scene.params.fields.not_carried(field).unwrap_or_else(|| "the scene does not carry it".into())
                }
            };
            return Err(Error::invalid("field", field.name(), why));
        }
        if field == FieldId::Curl {
            // The step keeps it only as scratch of vorticity confinement.
            backend.run(&self.curl, inputs)?;
        }
        Ok(field.into())
    }

    fn set_scene(&mut self, scene: Scene, backend: &mut dyn Backend) -> Result<()> {
        scene.validate()?;
        let grid = scene.grid()?;
        // Obstacles and the sides' kinds may change (the schedules follow); the box stays.
        if (Grid { solids: self.grid.solids, held: self.grid.held, sides: self.grid.sides, ..grid }) != self.grid {
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
        let formats = |s: &Scene| (s.storage.format, s.storage.fields);
        if formats(&scene) != formats(&self.scene) {
            return Err(Error::invalid(
                "storage.format",
                format!("{:?}", formats(&scene)),
                format!(
                    "a running simulation keeps the formats its fields are stored in ({:?}): build a new Simulation \
                     to store them otherwise",
                    formats(&self.scene)
                ),
            ));
        }
        // Obstacles on a path take their leg at the next step.
        let solids = SolidSet::new(&scene, FieldId::Obstacles.into())?;
        let fields = GridFields::declare_with(&grid, &scene.params, solids.obstacles()).stored(&scene.storage);
        // Fields the new scene adds start at zero; those it drops are freed.
        backend.allocate(fields.resources())?;
        let moved = solids.obstacles() != self.solids.obstacles();
        self.solids = solids;
        if moved || fields != self.fields || grid.sides != self.grid.sides {
            self.solids.write(backend)?;
            // The faces until the next step rasterises them where they stand then.
            let inputs = StepInputs { dt: scene.params.dt, ..StepInputs::default() };
            backend.run(&step::solids(&grid, &scene.params), &inputs)?;
        }
        let (old, new) = (&self.scene.params.pressure, &scene.params.pressure);
        if old.solver != new.solver || old.precision != new.precision {
            // Only the double-float solvers write the low part; the others read it as given.
            backend.upload(FieldId::PressureLo.into(), &vec![0.0; grid.len(FieldId::PressureLo)])?;
        }
        let setup = step::setup(&grid, &scene.params);
        if setup.dispatches().next().is_some() && (old != new || fields != self.fields) {
            // What the new solver needs written before its first solve (the filter's taps).
            backend.run(&setup, &StepInputs { dt: scene.params.dt, ..StepInputs::default() })?;
        }
        self.split = Split::for_params(&grid, &scene.params);
        self.step = step::step(&grid, &scene.params);
        if grid != self.grid {
            self.diagnostics = step::diagnostics(&grid);
            self.state = step::state_check(&grid);
            self.curl = step::curl(&grid);
            self.grid = grid;
        }
        self.fields = fields;
        self.scene = scene;
        Ok(())
    }

    fn emitters(&self, dt: f32) -> Vec<Splat> {
        self.scene.emitter_splats(&self.grid, dt)
    }

    fn check_splat(&self, splat: &Splat) -> Result<()> {
        let fields = &self.scene.params.fields;
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

    fn has(&self, field: FieldId) -> bool {
        field.is_public() && self.fields.has(field)
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
}
