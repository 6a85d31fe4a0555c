//! The particle liquid as a [`Model`]: its resources, the schedules of a step (the sort, then
//! the paper's substep, as many times as `particles.substeps` says), of a drawing and of the
//! state's check.

use crate::backend::{Backend, StepInputs};
use crate::grid::solid::{Motion, Obstacle, Pose};
use crate::grid::{FieldId, Grid};
use crate::ir::resource::{Format, Lifetime, ResourceDesc, ResourceId, Shape};
use crate::ir::schedule::{ParamBlock, ReduceOp, Schedule, ScheduleBuilder};
use crate::model::{Diagnostics, Model};
use crate::particles::kernels::*;
use crate::particles::{
    CollideParams, DensityParams, DrawParams, HashParams, RelaxParams, SCAN_BLOCK, SHAPE_BOX, SHAPE_CIRCLE, ScanParams,
    ViscosityParams,
};
use crate::scene::Scene;
use crate::scene::particles::{Bounds, ParticleSpec};
use crate::splat::Splat;
use crate::{Error, Result};

/// The model's resources, in the order of its list (`ResourceId(r as usize)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Res {
    /// Positions (state), world units.
    Position,
    /// Velocities (state), world units per second.
    Velocity,
    /// The positions' partner: the gathered positions, then the substep's old ones.
    PositionTmp,
    /// The velocities' partner (the gather's output).
    VelocityTmp,
    /// The relaxed positions.
    Relaxed,
    /// Each particle's pressure and near-pressure.
    Pressure,
    /// Each particle's hash cell, by index before the sort.
    Keys,
    /// Each slot's hash cell, after the sort.
    Cell,
    /// The sort: the particle index of each slot.
    Order,
    /// Particles per hash cell (zero between runs).
    Counts,
    /// The first slot of each hash cell (one more entry: the count).
    Starts,
    /// The prefix sum's block totals.
    Totals,
    /// Their exclusive prefix sum.
    TotalsScanned,
    /// The total of the totals (one value).
    Total,
    /// The liquid drawn to the picture's cells.
    Density,
}

impl From<Res> for ResourceId {
    fn from(r: Res) -> ResourceId {
        ResourceId(r as u32)
    }
}

/// The particle liquid.
#[derive(Debug)]
pub struct ParticleModel {
    scene: Scene,
    spec: ParticleSpec,
    grid: Grid,
    count: u32,
    cells: [u32; 2],
    resources: Vec<ResourceDesc>,
    step: Schedule,
    draw: Schedule,
    state: Schedule,
}

/// Reduction slot of the largest |velocity| component.
const SLOT_VELOCITY: usize = 0;

impl ParticleModel {
    /// The model of a checked `scene` (one with a `[particles]` section).
    pub fn new(scene: Scene) -> Result<ParticleModel> {
        let Some(spec) = scene.particles.clone() else {
            return Err(Error::invalid("particles", "none", "a particle model needs a [particles] section"));
        };
        let frame = scene.grid()?;
        spec.validate(&frame)?;
        let count = spec.initial_count(&frame) as u32;
        let grid = Grid { particles: count, ..frame };
        let cells = spec.hash_cells(&grid);
        let mut model = ParticleModel {
            resources: resources(&grid, count, cells),
            step: Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]).build(),
            draw: Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]).build(),
            state: Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]).build(),
            scene,
            spec,
            grid,
            count,
            cells,
        };
        model.build_schedules();
        Ok(model)
    }

    /// Live particles.
    pub fn count(&self) -> u32 {
        self.count
    }

    fn builder(&self) -> ScheduleBuilder {
        Schedule::builder(self.grid.uniform_bytes(), [self.grid.nx, self.grid.ny])
    }

    fn hash_params(&self) -> HashParams {
        let r = self.spec.radius_world(&self.grid);
        HashParams { count: self.count, cells_x: self.cells[0], cells_y: self.cells[1], inv_cell: 1.0 / r }
    }

    /// Workgroup-rounded 1D extent of `n` invocations.
    fn over(n: u32) -> [u32; 2] {
        [n.max(1), 1]
    }

    /// The counting sort's first part: keys, counts, their prefix sum, the scatter and each
    /// cell's run in index order (the gather is the step's own).
    fn push_sort(&self, b: &mut ScheduleBuilder) {
        let hash = self.hash_params();
        let hp = Some(ParamBlock::new(&hash));
        let id = ResourceId::from;
        let n = self.count;
        b.dispatch(PARTICLE_HASH, &[id(Res::Position), id(Res::Keys), id(Res::Counts)], hp, Self::over(n));
        let len = self.cells[0] * self.cells[1] + 1;
        let blocks = len.div_ceil(SCAN_BLOCK);
        let scan = |len: u32| Some(ParamBlock::new(&ScanParams { len, ..ScanParams::default() }));
        let threads = |len: u32| Self::over(len.div_ceil(SCAN_BLOCK) * crate::particles::WORKGROUP);
        b.dispatch(PARTICLE_SCAN, &[id(Res::Counts), id(Res::Starts), id(Res::Totals)], scan(len), threads(len));
        if blocks > 1 {
            // The block totals scanned, then added: two levels hold 1024 × 1024 cells ([`crate::scene::particles::MAX_HASH_CELLS`]).
            b.dispatch(
                PARTICLE_SCAN,
                &[id(Res::Totals), id(Res::TotalsScanned), id(Res::Total)],
                scan(blocks),
                threads(blocks),
            );
            b.dispatch(PARTICLE_SCAN_ADD, &[id(Res::Starts), id(Res::TotalsScanned)], scan(len), Self::over(len));
        }
        b.dispatch(
            PARTICLE_SCATTER,
            &[id(Res::Keys), id(Res::Starts), id(Res::Counts), id(Res::Order)],
            hp,
            Self::over(n),
        );
        b.dispatch(PARTICLE_ORDER, &[id(Res::Starts), id(Res::Order)], hp, Self::over(len - 1));
    }

    fn build_schedules(&mut self) {
        let s = &self.spec;
        let g = &self.grid;
        let id = ResourceId::from;
        let n = self.count;
        let r = s.radius_world(g);
        let (inv_radius, radius_sq) = (1.0 / r, r * r);
        let dt_scale = 1.0 / s.substeps as f32;
        let [cells_x, cells_y] = self.cells;
        let hp = Some(ParamBlock::new(&self.hash_params()));
        let viscosity = ViscosityParams {
            count: n,
            cells_x,
            cells_y,
            dt_scale,
            inv_radius,
            radius_sq,
            sigma: s.viscosity / r,
            beta: s.quadratic_viscosity,
            gravity: s.gravity,
            ..Default::default()
        };
        let density = DensityParams {
            count: n,
            cells_x,
            cells_y,
            inv_radius,
            radius_sq,
            rest_density: s.rest_density,
            stiffness: s.stiffness,
            near_stiffness: s.near_stiffness,
        };
        let relax = RelaxParams { count: n, cells_x, cells_y, inv_radius, radius_sq, dt_scale, ..Default::default() };
        let (shape, lo, hi) = match s.bounds(g) {
            Bounds::Box { min, max } => (SHAPE_BOX, min, max),
            Bounds::Circle { center, radius } => (SHAPE_CIRCLE, center, [radius, 0.0]),
        };
        let collide = CollideParams {
            count: n,
            shape,
            dt_scale,
            friction: s.friction,
            lo,
            hi,
            anti_stick: s.anti_stick * r,
            ..Default::default()
        };
        let mut b = self.builder();
        for _ in 0..s.substeps {
            self.push_sort(&mut b);
            b.dispatch(
                PARTICLE_GATHER,
                &[
                    id(Res::Order),
                    id(Res::Position),
                    id(Res::Velocity),
                    id(Res::Keys),
                    id(Res::PositionTmp),
                    id(Res::VelocityTmp),
                    id(Res::Cell),
                ],
                hp,
                Self::over(n),
            );
            b.swap(id(Res::Position), id(Res::PositionTmp));
            b.swap(id(Res::Velocity), id(Res::VelocityTmp));
            b.dispatch(
                PARTICLE_FORCES,
                &[id(Res::Position), id(Res::Velocity), id(Res::Cell), id(Res::Starts), id(Res::PositionTmp)],
                Some(ParamBlock::new(&viscosity)),
                Self::over(n),
            );
            // The advanced positions become the state; the old ones stay in the partner.
            b.swap(id(Res::Position), id(Res::PositionTmp));
            for _ in 0..s.iterations {
                b.dispatch(
                    PARTICLE_DENSITY,
                    &[id(Res::Position), id(Res::Cell), id(Res::Starts), id(Res::Pressure)],
                    Some(ParamBlock::new(&density)),
                    Self::over(n),
                );
                b.dispatch(
                    PARTICLE_RELAX,
                    &[id(Res::Position), id(Res::Pressure), id(Res::Cell), id(Res::Starts), id(Res::Relaxed)],
                    Some(ParamBlock::new(&relax)),
                    Self::over(n),
                );
                b.swap(id(Res::Position), id(Res::Relaxed));
            }
            b.dispatch(
                PARTICLE_COLLIDE,
                &[id(Res::Position), id(Res::PositionTmp), id(Res::Velocity)],
                Some(ParamBlock::new(&collide)),
                Self::over(n),
            );
        }
        self.step = b.build();

        let mut b = self.builder();
        self.push_sort(&mut b);
        let draw = DrawParams {
            count: n,
            cells_x,
            cells_y,
            inv_cell: inv_radius,
            inv_radius,
            radius_sq,
            scale: 1.0 / s.rest_density,
            ..Default::default()
        };
        b.dispatch(
            PARTICLE_DRAW,
            &[id(Res::Position), id(Res::Order), id(Res::Starts), id(Res::Density)],
            Some(ParamBlock::new(&draw)),
            [g.nx, g.ny],
        );
        self.draw = b.build();

        let mut b = self.builder();
        b.reduce(id(Res::Velocity), ReduceOp::MaxAbs, SLOT_VELOCITY);
        self.state = b.build();
    }

    fn maxima(&self, backend: &mut dyn Backend, inputs: &StepInputs) -> Result<Diagnostics> {
        backend.run(&self.state, inputs)?;
        let r = backend.reductions()?;
        let v = r.get(SLOT_VELOCITY).copied().unwrap_or(f64::NAN);
        let mut state_max = [0.0; Diagnostics::STATE_FIELDS.len()];
        state_max[0] = v;
        state_max[1] = v;
        Ok(Diagnostics {
            max_divergence: 0.0,
            residual: 0.0,
            ..Diagnostics::from_state(state_max, inputs.dt, self.spec.radius_world(&self.grid))
        })
    }
}

/// The resources of `count` particles on `grid` with a hash of `cells`.
fn resources(grid: &Grid, count: u32, cells: [u32; 2]) -> Vec<ResourceDesc> {
    let n = u64::from(count);
    let hash = u64::from(cells[0]) * u64::from(cells[1]) + 1;
    let totals = hash.div_ceil(u64::from(SCAN_BLOCK)).max(1);
    let el = |name, format, lifetime, len| ResourceDesc::new(name, Shape::Elements, format, lifetime, len);
    let (state, scratch) = (Lifetime::State, Lifetime::Scratch);
    let list = [
        (Res::Position, el("positions", Format::Vec2F32, state, n)),
        (Res::Velocity, el("velocities", Format::Vec2F32, state, n)),
        (Res::PositionTmp, el("positions_tmp", Format::Vec2F32, scratch, n)),
        (Res::VelocityTmp, el("velocities_tmp", Format::Vec2F32, scratch, n)),
        (Res::Relaxed, el("relaxed", Format::Vec2F32, scratch, n)),
        (Res::Pressure, el("particle_pressure", Format::Vec2F32, scratch, n)),
        (Res::Keys, el("keys", Format::U32, scratch, n)),
        (Res::Cell, el("cells", Format::U32, scratch, n)),
        (Res::Order, el("order", Format::U32, scratch, n)),
        (Res::Counts, el("counts", Format::U32, scratch, hash)),
        (Res::Starts, el("starts", Format::U32, scratch, hash)),
        (Res::Totals, el("totals", Format::U32, scratch, totals)),
        (Res::TotalsScanned, el("totals_scanned", Format::U32, scratch, totals)),
        (Res::Total, el("total", Format::U32, scratch, 1)),
        (
            Res::Density,
            ResourceDesc::new("density", Shape::Cells, Format::F32, scratch, u64::from(grid.nx) * u64::from(grid.ny))
                .on_grid(grid.nx, grid.ny),
        ),
    ];
    list.iter()
        .enumerate()
        .map(|(i, (r, d))| {
            debug_assert_eq!(*r as usize, i);
            d.clone()
        })
        .collect()
}

impl Model for ParticleModel {
    fn family(&self) -> &'static str {
        "particles"
    }

    fn scene(&self) -> &Scene {
        &self.scene
    }

    fn grid(&self) -> &Grid {
        &self.grid
    }

    fn resources(&self) -> &[ResourceDesc] {
        &self.resources
    }

    fn schedules(&self) -> Vec<Schedule> {
        vec![self.step.clone(), self.draw.clone(), self.state.clone()]
    }

    fn initialize(&mut self, backend: &mut dyn Backend) -> Result<()> {
        let (x, v) = self.spec.initial_particles(&self.grid);
        backend.write(Res::Position.into(), bytemuck::cast_slice(&x))?;
        backend.write(Res::Velocity.into(), bytemuck::cast_slice(&v))?;
        Ok(())
    }

    fn step(&mut self, backend: &mut dyn Backend, inputs: &StepInputs) -> Result<()> {
        backend.run(&self.step, inputs)
    }

    fn last_iterations(&self) -> u32 {
        self.spec.iterations
    }

    fn diagnostics(&mut self, backend: &mut dyn Backend, inputs: &StepInputs) -> Result<Diagnostics> {
        self.maxima(backend, inputs)
    }

    fn state_maxima(&mut self, backend: &mut dyn Backend, inputs: &StepInputs) -> Result<Diagnostics> {
        self.maxima(backend, inputs)
    }

    fn readable(&mut self, backend: &mut dyn Backend, field: FieldId, inputs: &StepInputs) -> Result<ResourceId> {
        match field {
            FieldId::Positions => Ok(Res::Position.into()),
            FieldId::Velocities => Ok(Res::Velocity.into()),
            FieldId::Density => {
                backend.run(&self.draw, inputs)?;
                Ok(Res::Density.into())
            }
            _ => Err(Error::invalid(
                "field",
                field.name(),
                "a particle scene has positions, velocities and density (the liquid drawn to the grid)",
            )),
        }
    }

    fn set_scene(&mut self, scene: Scene, backend: &mut dyn Backend) -> Result<()> {
        let next = ParticleModel::new(scene)?;
        if next.grid != self.grid || next.count != self.count || next.cells != self.cells {
            return Err(Error::invalid(
                "particles",
                format!("{} particles on {}x{}", next.count, next.grid.nx, next.grid.ny),
                format!(
                    "a running simulation keeps its particles, box and radius ({} particles on {}x{}): build a new Simulation",
                    self.count, self.grid.nx, self.grid.ny
                ),
            ));
        }
        backend.allocate(&next.resources)?;
        *self = ParticleModel { ..next };
        Ok(())
    }

    fn emitters(&self, _dt: f32) -> Vec<Splat> {
        Vec::new()
    }

    fn has(&self, field: FieldId) -> bool {
        matches!(field, FieldId::Positions | FieldId::Velocities | FieldId::Density)
    }

    fn check_splat(&self, splat: &Splat) -> Result<()> {
        Err(Error::invalid(
            "splat",
            format!("at {:?}", splat.center),
            "a particle scene takes no splats (a pointer force and emitters are the particle model's inputs)",
        ))
    }

    fn set_obstacle(
        &mut self,
        _backend: &mut dyn Backend,
        index: usize,
        _pose: Pose,
        _motion: Motion,
        _now: f32,
    ) -> Result<()> {
        Err(Error::invalid("obstacle", index, "the particle scene has no obstacles"))
    }

    fn obstacles(&self) -> &[Obstacle] {
        &[]
    }

    fn restored(&mut self, _backend: &mut dyn Backend) -> Result<()> {
        Ok(())
    }
}
