//! The particle liquid as a [`Model`]: its resources, the schedules of a step (the sort, then
//! the paper's substep, as many times as `particles.substeps` says), of a drawing and of the
//! state's check, and its obstacles.

use std::any::Any;

mod schedules;

use crate::frame::solid::{self, KeyPath, Motion, Obstacle, Pose};
use crate::frame::solid_set::SolidSet;
use crate::frame::{Frame, Lattice};
use crate::model::{Diagnostics, FieldInfo, Fit, Model, Solids};
use crate::particles::kernels::*;
use crate::particles::spec::{Faucet, ParticleSpec};
use crate::particles::{EmitParams, NO_SPRING, SCAN_BLOCK};
use crate::splat::Splat;
use swirly_ir::backend::{Backend, StepInputs};
use swirly_ir::resource::{Format, Lifetime, ResourceDesc, ResourceId, Shape};
use swirly_ir::schedule::{ParamBlock, Schedule};
use swirly_ir::{Error, Result};

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
    /// Each slot's stable id (state; with springs).
    Ids,
    /// Its partner (the ids gathered into sorted order).
    IdsTmp,
    /// Each id's slot (with springs).
    Slots,
    /// Each id's springs: `max_per_particle` entries of [partner id, rest length bits] (state;
    /// with springs).
    Springs,
    /// The springs each id proposes in a substep.
    Proposals,
    /// The obstacles as the device reads them ([`solid::table`]; state).
    Obstacles,
    /// The live count (state: a checkpoint keeps it; the host writes it as emitters add).
    Live,
}

impl From<Res> for ResourceId {
    fn from(r: Res) -> ResourceId {
        ResourceId(r as u32)
    }
}

/// What the particle liquid is made from: a scene's box, its `[particles]` section and its
/// obstacles, checked (the scene's `particle_setup`).
#[derive(Clone, Debug, PartialEq)]
pub struct ParticleSetup {
    /// The box (whose cells are the picture's).
    pub frame: Frame,
    /// The liquid.
    pub spec: ParticleSpec,
    /// The obstacles in world units.
    pub obstacles: Vec<Obstacle>,
    /// Each obstacle's path, if it follows one.
    pub paths: Vec<Option<KeyPath>>,
}

/// The particle liquid.
#[derive(Debug)]
pub struct ParticleModel {
    spec: ParticleSpec,
    frame: Frame,
    /// The obstacles as the scene places them (what a reset starts from).
    placed: (Vec<Obstacle>, Vec<Option<KeyPath>>),
    count: u32,
    /// Room on the device: the particles at the start and every emitter's budget.
    capacity: u32,
    /// Particles at the start (the filled regions'), counted once.
    initial: u32,
    faucets: Vec<Faucet>,
    /// Particles each emitter has let out.
    emitted: Vec<u32>,
    cells: [u32; 2],
    solids: SolidSet,
    resources: Vec<ResourceDesc>,
    step: Schedule,
    draw: Schedule,
    state: Schedule,
}

/// Reduction slot of the largest |velocity| component.
const SLOT_VELOCITY: usize = 0;

impl ParticleModel {
    /// The model of `setup`.
    pub fn new(setup: ParticleSetup) -> Result<ParticleModel> {
        let ParticleSetup { frame, spec, obstacles, paths } = setup;
        let solids = SolidSet::new(obstacles.clone(), &paths, Res::Obstacles.into());
        let count = spec.initial_count(&frame, solids.obstacles()).min(u64::from(u32::MAX)) as u32;
        // Within MAX_PARTICLES: checked by the spec's `validate`.
        let capacity = (u64::from(count) + spec.budgets()) as u32;
        let cells = spec.hash_cells(&frame);
        let uniform = Self::uniform_of(&frame, !obstacles.is_empty());
        let empty = || Schedule::builder(uniform, [frame.nx, frame.ny]).build();
        let mut model = ParticleModel {
            resources: resources(&frame, capacity, cells, &spec, solids.obstacles()),
            capacity,
            initial: count,
            faucets: spec.faucets(&frame),
            emitted: vec![0; spec.emitters.len()],
            step: empty(),
            draw: empty(),
            state: empty(),
            spec,
            frame,
            placed: (obstacles, paths),
            count,
            cells,
            solids,
        };
        model.build_schedules();
        Ok(model)
    }

    /// The uniform of its kernels: the box, its sides, and whether obstacles cut it.
    fn uniform_of(frame: &Frame, obstacles: bool) -> [u8; swirly_ir::schedule::UNIFORM_BYTES] {
        frame.uniform_bytes(obstacles || frame.needs_faces())
    }

    /// Live particles.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Take `count` live particles: the schedules follow.
    fn set_count(&mut self, count: u32) {
        self.count = count;
        self.build_schedules();
    }

    /// Let the emitters out for the step from `inputs.time` to `inputs.time + dt`: their new
    /// particles after the live ones, the count written to the device.
    fn emit(&mut self, backend: &mut dyn Backend, inputs: &StepInputs) -> Result<()> {
        let (t0, t1) = (inputs.time, inputs.time + inputs.dt);
        let mut b = self.builder();
        let mut added = 0u32;
        let id = ResourceId::from;
        for (f, a) in self.faucets.iter().zip(&mut self.emitted) {
            let z = f.emitted(t1);
            // Never past the room: the budgets sum to it.
            let new = z.saturating_sub(*a).min(self.capacity - self.count - added);
            if new == 0 {
                continue;
            }
            let p = EmitParams {
                count: new,
                first: self.count + added,
                index: *a,
                per_row: f.per_row,
                center: f.center,
                across: f.across,
                velocity: f.velocity,
                lead: f.start - t0,
                interval: f.interval,
            };
            b.dispatch(
                PARTICLE_EMIT,
                &[id(Res::Position), id(Res::Velocity), id(Res::Ids)],
                Some(ParamBlock::new(&p)),
                Self::over(new),
            );
            added += new;
            *a += new;
        }
        if added == 0 {
            return Ok(());
        }
        backend.run(&b.build(), inputs)?;
        self.set_count(self.count + added);
        self.write_live(backend)
    }

    /// The live count and each emitter's count, to the device (state: checkpoints keep them).
    fn write_live(&self, backend: &mut dyn Backend) -> Result<()> {
        let words: Vec<u32> = std::iter::once(self.count).chain(self.emitted.iter().copied()).collect();
        backend.write(Res::Live.into(), bytemuck::cast_slice(&words))
    }

    fn maxima(&self, backend: &mut dyn Backend, inputs: &StepInputs) -> Result<Diagnostics> {
        backend.run(&self.state, inputs)?;
        let r = backend.reductions()?;
        let v = r.get(SLOT_VELOCITY).copied().unwrap_or(f64::NAN);
        let radius = self.spec.radius_world(&self.frame);
        Ok(Diagnostics::from_maxima(vec![("velocities", v)], &["velocities"], inputs.dt, radius))
    }
}

/// Why `ids` and `springs` (lists of `k` entries) are not a state the spring kernels can
/// run on: the ids a permutation of the particles, every list packed from its start with
/// partners among them, each spring held by both of its pair with one finite rest length.
pub fn check_springs(ids: &[u32], springs: &[u32], k: usize) -> std::result::Result<(), String> {
    let n = ids.len();
    let mut seen = vec![false; n];
    for (s, &a) in ids.iter().enumerate() {
        match seen.get_mut(a as usize) {
            Some(x) if !*x => *x = true,
            _ => return Err(format!("slot {s} holds id {a}, not a permutation of 0..{n}")),
        }
    }
    let list = |a: usize| springs[2 * k * a..2 * k * (a + 1)].chunks_exact(2);
    if springs.len() != 2 * k * n {
        return Err(format!("{} words of springs for {n} particles of {k}", springs.len()));
    }
    for a in 0..n {
        let mut ended = false;
        for e in list(a) {
            if e[0] == NO_SPRING {
                ended = true;
                continue;
            }
            let b = e[0] as usize;
            if ended || b >= n || b == a {
                return Err(format!("particle {a} holds an entry to {b} out of place"));
            }
            let rest = f32::from_bits(e[1]);
            if !rest.is_finite() || !list(b).any(|f| f[0] == a as u32 && f[1] == e[1]) {
                return Err(format!("the spring of particles {a} and {b} is not held by both alike"));
            }
        }
    }
    Ok(())
}

/// The resources of room for `count` particles in `grid` with a hash of `cells`, springs as
/// `spec` says and `obstacles`' table.
fn resources(
    grid: &Frame,
    count: u32,
    cells: [u32; 2],
    spec: &ParticleSpec,
    obstacles: &[Obstacle],
) -> Vec<ResourceDesc> {
    let n = u64::from(count);
    // Without springs their resources hold one unused word (a binding is never empty).
    let (with_ids, spring_words) = match spec.springs {
        Some(sp) => (n, 2 * n * u64::from(sp.max_per_particle)),
        None => (1, 1),
    };
    let hash = u64::from(cells[0]) * u64::from(cells[1]) + 1;
    let totals = hash.div_ceil(u64::from(SCAN_BLOCK)).max(1);
    let el = |name, format, lifetime, len| ResourceDesc::new(name, Shape::Elements, format, lifetime, len);
    let (state, scratch) = (Lifetime::State, Lifetime::Scratch);
    let emitters = spec.emitters.len() as u64;
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
        (Res::Ids, el("ids", Format::U32, state, n)),
        (Res::IdsTmp, el("ids_tmp", Format::U32, scratch, with_ids)),
        (Res::Slots, el("slots", Format::U32, scratch, with_ids)),
        (Res::Springs, el("springs", Format::U32, state, spring_words)),
        (Res::Proposals, el("proposals", Format::U32, scratch, spring_words)),
        (Res::Obstacles, el("obstacles", Format::Vec4F32, state, solid::table_len(obstacles) as u64)),
        (Res::Live, el("live", Format::U32, state, 1 + emitters)),
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

    fn frame(&self) -> &Frame {
        &self.frame
    }

    fn fields(&self) -> Vec<FieldInfo> {
        let points = Lattice::Points { count: self.count };
        vec![
            FieldInfo { name: "positions", lattice: points, channels: 2 },
            FieldInfo { name: "velocities", lattice: points, channels: 2 },
            FieldInfo { name: "density", lattice: Lattice::Cells { factor: 1 }, channels: 1 },
        ]
    }

    fn uniform(&self) -> [u8; swirly_ir::schedule::UNIFORM_BYTES] {
        Self::uniform_of(&self.frame, !self.solids.obstacles().is_empty())
    }

    fn resources(&self) -> &[ResourceDesc] {
        &self.resources
    }

    fn schedules(&self) -> Vec<Schedule> {
        vec![self.step.clone(), self.draw.clone(), self.state.clone()]
    }

    fn initialize(&mut self, backend: &mut dyn Backend) -> Result<()> {
        self.solids = SolidSet::new(self.placed.0.clone(), &self.placed.1, Res::Obstacles.into());
        let (mut x, mut v) = self.spec.initial_particles(&self.frame, self.solids.obstacles());
        // The room after them holds the emitters' particles to come.
        let room = self.capacity as usize;
        x.resize(room, [0.0; 2]);
        v.resize(room, [0.0; 2]);
        backend.write(Res::Position.into(), bytemuck::cast_slice(&x))?;
        backend.write(Res::Velocity.into(), bytemuck::cast_slice(&v))?;
        let ids: Vec<u32> = (0..self.capacity).collect();
        backend.write(Res::Ids.into(), bytemuck::cast_slice(&ids))?;
        if let Some(sp) = self.spec.springs {
            let none = [NO_SPRING, 0].repeat(room * sp.max_per_particle as usize);
            backend.write(Res::Springs.into(), bytemuck::cast_slice(&none))?;
        }
        let initial = self.initial;
        self.emitted.fill(0);
        self.set_count(initial);
        self.write_live(backend)?;
        self.solids.write(backend)
    }

    fn step(&mut self, backend: &mut dyn Backend, inputs: &StepInputs, splats: &[Splat]) -> Result<()> {
        self.solids.follow(backend, inputs.time, inputs.dt)?;
        self.emit(backend, inputs)?;
        backend.run(&self.step, &inputs.with_records(crate::splat::records(splats, &self.frame)?))
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

    fn check_field(&self, name: &str) -> Result<()> {
        match name {
            "positions" | "velocities" | "density" => Ok(()),
            _ => Err(Error::invalid(
                "field",
                name,
                "a particle scene has positions, velocities and density (the liquid drawn to the grid)",
            )),
        }
    }

    fn readable(&mut self, backend: &mut dyn Backend, name: &str, inputs: &StepInputs) -> Result<ResourceId> {
        self.check_field(name)?;
        match name {
            "positions" => Ok(Res::Position.into()),
            "velocities" => Ok(Res::Velocity.into()),
            "density" => {
                backend.run(&self.draw, inputs)?;
                Ok(Res::Density.into())
            }
            _ => Err(Error::invalid(
                "field",
                name,
                "a particle scene has positions, velocities and density (the liquid drawn to the grid)",
            )),
        }
    }

    fn check_writable(&self, name: &str) -> Result<()> {
        match name {
            "positions" | "velocities" => Ok(()),
            "density" => Err(Error::invalid(
                "field",
                name,
                "the particle liquid's density is drawn from its particles: set positions and velocities",
            )),
            _ => Err(Error::invalid("field", name, "a particle scene has positions, velocities and density")),
        }
    }

    fn written(&mut self, _backend: &mut dyn Backend, _name: &str) -> Result<()> {
        Ok(())
    }

    fn adopt(&mut self, next: Box<dyn Model>, backend: &mut dyn Backend) -> Result<()> {
        let family = next.family();
        let Ok(next) = next.into_any().downcast::<ParticleModel>() else {
            return Err(Error::invalid(
                "scene",
                family,
                "a running simulation keeps its model (the particle liquid): build a new Simulation for another",
            ));
        };
        let lists = |m: &ParticleModel| m.spec.springs.map(|s| s.max_per_particle);
        if next.frame != self.frame
            || next.capacity != self.capacity
            || next.faucets != self.faucets
            || next.cells != self.cells
            || lists(&next) != lists(self)
        {
            return Err(Error::invalid(
                "particles",
                format!("room for {} particles on {}x{}", next.capacity, next.frame.nx, next.frame.ny),
                format!(
                    "a running simulation keeps its particles, box, radius, emitters and spring lists (room for {} \
                     particles on {}x{}): build a new Simulation",
                    self.capacity, self.frame.nx, self.frame.ny
                ),
            ));
        }
        backend.allocate(&next.resources)?;
        // Obstacles on a path take their leg at the next step; the live particles stay.
        let (live, emitted) = (self.count, std::mem::take(&mut self.emitted));
        *self = ParticleModel { emitted, ..*next };
        self.set_count(live);
        self.solids.write(backend)
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }

    fn emitters(&self, _dt: f32) -> Vec<Splat> {
        Vec::new()
    }

    fn emitter_count(&self) -> usize {
        0
    }

    fn carried(&self, splat: Splat) -> Splat {
        Splat { temperature: 0.0, dye: [0.0; 4], fuel: 0.0, ..splat }
    }

    fn pointer(&self, splat: Splat) -> Splat {
        // A drag pushes the particles it passes; a pull toward the pointer is a splat's own.
        Splat { density: 0.0, ..self.carried(splat) }
    }

    fn check_splat(&self, splat: &Splat) -> Result<()> {
        // A pointer: its velocity and its pull (`density`) act; the grid's amounts would be lost.
        if splat.temperature != 0.0 || splat.dye != [0.0; 4] || splat.fuel != 0.0 {
            return Err(Error::invalid(
                "splat",
                format!("temperature {}, dye {:?}, fuel {}", splat.temperature, splat.dye, splat.fuel),
                "a splat on a particle scene is a pointer: its velocity pushes the particles under it and \
                 its density pulls them toward its centre (negative: pushes away); it carries no temperature, \
                 dye or fuel",
            ));
        }
        Ok(())
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

    fn obstacles(&self) -> &[Obstacle] {
        self.solids.obstacles()
    }

    fn restored(&mut self, backend: &mut dyn Backend) -> Result<()> {
        self.solids.restored(backend)?;
        let words = backend.read(Res::Live.into())?;
        let (live, emitted) = words.split_first().map_or((u32::MAX, &[][..]), |(l, e)| (*l, e));
        let initial = self.initial;
        let sum = emitted.iter().try_fold(initial, |a, e| a.checked_add(*e));
        let within = emitted.iter().zip(&self.faucets).all(|(e, f)| *e <= f.budget);
        if sum != Some(live) || !within || live > self.capacity {
            return Err(Error::Checkpoint {
                problem: format!(
                    "it holds {live} live particles, not the {initial} it started with and its emitters' {emitted:?}"
                ),
            });
        }
        self.emitted = emitted.to_vec();
        self.set_count(live);
        let Some(sp) = self.spec.springs else { return Ok(()) };
        let mut ids = backend.read(Res::Ids.into())?;
        ids.truncate(live as usize);
        let mut springs = backend.read(Res::Springs.into())?;
        springs.truncate(2 * live as usize * sp.max_per_particle as usize);
        check_springs(&ids, &springs, sp.max_per_particle as usize)
            .map_err(|problem| Error::Checkpoint { problem: format!("its springs are not whole: {problem}") })
    }

    fn fit(&self) -> Fit {
        let (n, nx, ny) = (self.count, self.frame.nx, self.frame.ny);
        Fit::Fixed {
            what: format!("{n} particles (drawn on {nx}x{ny})"),
            advice: "the particle liquid is not downscaled: raise the budget or fill fewer particles (a larger \
                     `spacing` in `particles.fill`)"
                .into(),
        }
    }

    fn cell_velocities(&mut self, backend: &mut dyn Backend, inputs: &StepInputs) -> Result<(Vec<[f32; 2]>, Vec<f32>)> {
        // The particle velocities averaged about each cell with the drawing's weights
        // `(1 − r/h)²`, covering it as far as its drawn density.
        let coverage = {
            let id = self.readable(backend, "density", inputs)?;
            backend.download(id)?
        };
        let n = 2 * self.count as usize;
        let mut x = backend.download(Res::Position.into())?;
        let mut vel = backend.download(Res::Velocity.into())?;
        x.truncate(n);
        vel.truncate(n);
        let grid = &self.frame;
        let (nx, ny) = (grid.nx as usize, grid.ny as usize);
        let r = self.spec.radius_world(grid);
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

    fn solids(&mut self, _backend: &mut dyn Backend, _inputs: &StepInputs) -> Result<Solids> {
        Ok(if self.solids.obstacles().is_empty() && !self.frame.needs_faces() {
            Solids::None
        } else {
            Solids::Rasterised
        })
    }

    fn draws_velocity(&self) -> bool {
        false
    }

    fn bytes_per_step(&self) -> u64 {
        use swirly_ir::kernel::Access;
        self.step
            .ops()
            .iter()
            .filter_map(|op| match op {
                swirly_ir::schedule::Op::Dispatch(d) => Some(d),
                _ => None,
            })
            .flat_map(|d| d.kernel.bindings.iter().zip(&d.resources))
            .map(|(b, r)| {
                let bytes = self.resources[r.index()].bytes();
                if b.access == Access::ReadWrite { 2 * bytes } else { bytes }
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three particles, lists of two: 0–1 and 1–2 held by both.
    fn whole() -> (Vec<u32>, Vec<u32>) {
        let r = 0.5f32.to_bits();
        let springs = vec![1, r, NO_SPRING, 0, 0, r, 2, r, 1, r, NO_SPRING, 0];
        (vec![2, 0, 1], springs)
    }

    #[test]
    fn whole_springs_pass_and_broken_ones_are_named() {
        let (ids, springs) = whole();
        assert_eq!(check_springs(&ids, &springs, 2), Ok(()));
        let err = check_springs(&[0, 0, 1], &springs, 2).expect_err("refused");
        assert!(err.contains("permutation"), "{err}");
        let mut one_sided = springs.clone();
        one_sided[8] = NO_SPRING;
        let err = check_springs(&ids, &one_sided, 2).expect_err("refused");
        assert!(err.contains("not held by both"), "{err}");
        let mut other_rest = springs.clone();
        other_rest[9] = 0.25f32.to_bits();
        assert!(check_springs(&ids, &other_rest, 2).is_err());
        let mut stray = springs.clone();
        stray[0] = 7;
        assert!(check_springs(&ids, &stray, 2).expect_err("refused").contains("out of place"));
        let mut gap = springs;
        gap[4] = NO_SPRING;
        assert!(check_springs(&ids, &gap, 2).is_err());
        assert!(check_springs(&ids, &[0; 5], 2).is_err());
    }
}
