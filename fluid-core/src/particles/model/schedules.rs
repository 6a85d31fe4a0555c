//! The particle liquid's schedules: a step (the sort, then the paper's substep as many times
//! as `particles.substeps` says), the drawing of its density, and the state's check.

use swirly_ir::ResourceId;
use swirly_ir::schedule::{ParamBlock, ReduceOp, Schedule, ScheduleBuilder};

use super::{ParticleModel, Res, SLOT_VELOCITY};
use crate::model::Model;
use crate::particles::kernels::*;
use crate::particles::spec::Bounds;
use crate::particles::{
    CollideParams, DensityParams, DrawParams, HashParams, RelaxParams, SCAN_BLOCK, SHAPE_BOX, SHAPE_CIRCLE, ScanParams,
    SolidParams, SpringParams, ViscosityParams,
};

/// The parameter blocks of a substep's kernels.
struct Substep {
    hash: Option<ParamBlock>,
    viscosity: ParamBlock,
    density: ParamBlock,
    relax: ParamBlock,
    collide: ParamBlock,
    springs: Option<ParamBlock>,
    /// The obstacles' block of substep `k`.
    solids: Vec<ParamBlock>,
}

impl ParticleModel {
    pub(super) fn builder(&self) -> ScheduleBuilder {
        Schedule::builder(self.uniform(), [self.frame.nx, self.frame.ny])
    }

    fn hash_params(&self) -> HashParams {
        let r = self.spec.radius_world(&self.frame);
        HashParams { count: self.count, cells_x: self.cells[0], cells_y: self.cells[1], inv_cell: 1.0 / r }
    }

    /// Workgroup-rounded 1D extent of `n` invocations.
    pub(super) fn over(n: u32) -> [u32; 2] {
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
            // The block totals scanned, then added: two levels hold 1024 × 1024 cells ([`crate::particles::spec::MAX_HASH_CELLS`]).
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

    /// Build the step, the drawing and the check for the live count.
    pub(super) fn build_schedules(&mut self) {
        let blocks = self.substep_params();
        let mut b = self.builder();
        for k in 0..self.spec.substeps {
            self.push_substep(&mut b, k, &blocks);
        }
        self.step = b.build();
        self.draw = self.draw_schedule();
        let mut b = self.builder();
        b.reduce(ResourceId::from(Res::Velocity), ReduceOp::MaxAbs, SLOT_VELOCITY);
        self.state = b.build();
    }

    /// The parameter blocks of every substep, from the spec and the live count.
    fn substep_params(&self) -> Substep {
        let s = &self.spec;
        let g = &self.frame;
        let n = self.count;
        let r = s.radius_world(g);
        let (inv_radius, radius_sq) = (1.0 / r, r * r);
        let dt_scale = 1.0 / s.substeps as f32;
        // Stickiness reaches nowhere when it is off, so the kernels skip it.
        let stick_distance = if s.stickiness > 0.0 { s.stick_distance * r } else { 0.0 };
        let [cells_x, cells_y] = self.cells;
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
            stickiness: s.stickiness,
            stick_distance,
            ..Default::default()
        };
        let springs = s.springs.map(|sp| SpringParams {
            count: n,
            cells_x,
            cells_y,
            max_springs: sp.max_per_particle,
            radius: r,
            radius_sq,
            dt_scale,
            yield_ratio: sp.yield_ratio,
            plasticity: sp.plasticity,
            stiffness: sp.stiffness,
            ..Default::default()
        });
        let eps = 0.05 * r;
        let solid_params = |k: u32| SolidParams {
            count: n,
            t_scale: (k + 1) as f32 / s.substeps as f32,
            dt_scale,
            friction: s.friction,
            stickiness: s.stickiness,
            stick_distance,
            eps,
            margin: stick_distance + 2.0 * eps,
        };
        let solids = (0..s.substeps).map(|k| ParamBlock::new(&solid_params(k))).collect();
        Substep {
            hash: Some(ParamBlock::new(&self.hash_params())),
            viscosity: ParamBlock::new(&viscosity),
            density: ParamBlock::new(&density),
            relax: ParamBlock::new(&relax),
            collide: ParamBlock::new(&collide),
            springs: springs.map(|sp| ParamBlock::new(&sp)),
            solids,
        }
    }

    /// Substep `k`: the sort and gather, the pointer (the first only), the forces, the
    /// springs, the relaxation passes, the container and the obstacles.
    fn push_substep(&self, b: &mut ScheduleBuilder, k: u32, p: &Substep) {
        let id = ResourceId::from;
        let n = self.count;
        let hp = p.hash;
        self.push_sort(b);
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
        if k == 0 {
            // The step's splats, once: a pointer's push and pull.
            b.dispatch(PARTICLE_POINTER, &[id(Res::Position), id(Res::Velocity)], hp, Self::over(n));
        }
        if p.springs.is_some() {
            b.dispatch(
                PARTICLE_IDS,
                &[id(Res::Order), id(Res::Ids), id(Res::IdsTmp), id(Res::Slots)],
                hp,
                Self::over(n),
            );
            b.swap(id(Res::Ids), id(Res::IdsTmp));
        }
        b.dispatch(
            PARTICLE_FORCES,
            &[id(Res::Position), id(Res::Velocity), id(Res::Cell), id(Res::Starts), id(Res::PositionTmp)],
            Some(p.viscosity),
            Self::over(n),
        );
        // The advanced positions become the state; the old ones stay in the partner.
        b.swap(id(Res::Position), id(Res::PositionTmp));
        if let Some(sp) = p.springs {
            let sp = Some(sp);
            b.dispatch(
                PARTICLE_SPRING_PROPOSE,
                &[
                    id(Res::Position),
                    id(Res::Cell),
                    id(Res::Starts),
                    id(Res::Ids),
                    id(Res::Slots),
                    id(Res::Springs),
                    id(Res::Proposals),
                ],
                sp,
                Self::over(n),
            );
            b.dispatch(PARTICLE_SPRING_CONFIRM, &[id(Res::Proposals), id(Res::Springs)], sp, Self::over(n));
            b.dispatch(
                PARTICLE_SPRING_APPLY,
                &[id(Res::Position), id(Res::Ids), id(Res::Slots), id(Res::Springs), id(Res::Relaxed)],
                sp,
                Self::over(n),
            );
            b.swap(id(Res::Position), id(Res::Relaxed));
        }
        for _ in 0..self.spec.iterations {
            b.dispatch(
                PARTICLE_DENSITY,
                &[id(Res::Position), id(Res::Cell), id(Res::Starts), id(Res::Pressure)],
                Some(p.density),
                Self::over(n),
            );
            b.dispatch(
                PARTICLE_RELAX,
                &[id(Res::Position), id(Res::Pressure), id(Res::Cell), id(Res::Starts), id(Res::Relaxed)],
                Some(p.relax),
                Self::over(n),
            );
            b.swap(id(Res::Position), id(Res::Relaxed));
        }
        b.dispatch(
            PARTICLE_COLLIDE,
            &[id(Res::Position), id(Res::PositionTmp), id(Res::Velocity)],
            Some(p.collide),
            Self::over(n),
        );
        if !self.solids.obstacles().is_empty() {
            b.dispatch(
                PARTICLE_SOLIDS,
                &[id(Res::Obstacles), id(Res::Position), id(Res::Velocity)],
                Some(p.solids[k as usize]),
                Self::over(n),
            );
        }
    }

    /// The liquid drawn to the picture's cells.
    fn draw_schedule(&self) -> Schedule {
        let (s, g, n) = (&self.spec, &self.frame, self.count);
        let r = s.radius_world(g);
        let (inv_radius, radius_sq) = (1.0 / r, r * r);
        let [cells_x, cells_y] = self.cells;
        let id = ResourceId::from;

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
        b.build()
    }
}
