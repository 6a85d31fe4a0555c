//! One lowering for every GPU backend: a [`Schedule`] becomes a [`Plan`] of invocations on
//! physical buffers, with their workgroup counts, the barriers between dependent ones and one
//! table of parameter blocks. Both GPU backends execute plans; they decide nothing else.

use std::collections::HashMap;

use crate::ir::kernel::{Kernel, Workgroup};
use crate::ir::resource::ResourceDesc;
use crate::ir::schedule::{Op, RESULT_SLOTS, Schedule};
use crate::ir::uniforms::{PARAMS_MAX_BYTES, REDUCE_FINAL, REDUCE_PARTIAL, ReduceParams};
use crate::{Error, Result};

/// What a backend tells the lowering about itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// Alignment of a parameter block's offset (the device's dynamic uniform offset alignment).
    pub param_align: u32,
    /// The 2D workgroup shape of [`Workgroup::Tiled`] kernels.
    pub workgroup: (u32, u32),
}

/// A buffer an invocation binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Buffer {
    /// The physical buffer of that index (a resource's, after the swaps so far).
    Physical(usize),
    /// The reductions' partial results.
    Partials,
    /// The reductions' result slots.
    Results,
}

/// One GPU dispatch of a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Invocation {
    /// The kernel (the shader entry point of its name).
    pub kernel: Kernel,
    /// One buffer per binding slot.
    pub buffers: Vec<Buffer>,
    /// The binding slots (bit `i`: slot `i`) whose buffer holds `f16` values: the shader
    /// variant to run (the kernel with those slots rewritten for `f16` storage).
    pub half: u32,
    /// Offset of its parameter block in [`Plan::params`].
    pub params: Option<u32>,
    /// Workgroups along x and y.
    pub workgroups: (u32, u32),
    /// Whether a memory barrier must stand before it: it binds a buffer written since the
    /// last barrier, or writes one read since (read after write, write after write, write
    /// after read). Independent invocations between two barriers may overlap.
    pub barrier: bool,
}

/// A schedule lowered for one assignment of resources to physical buffers.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The schedule's identity.
    pub schedule: u64,
    /// The assignment it starts from (resource → physical buffer).
    pub start: Vec<usize>,
    /// The assignment its swaps leave.
    pub end: Vec<usize>,
    /// The dispatches, in order.
    pub invocations: Vec<Invocation>,
    /// Every distinct parameter block once, each at an aligned offset followed by room for the
    /// largest block (at least one such stride, so a backend can always bind it).
    pub params: Vec<u8>,
    /// Reduction result slots written.
    pub reduction_slots: usize,
}

/// Lower `schedule` over `resources` (the model's list, which its ids index) starting from
/// the assignment `start`. Errors name what a schedule asks that the resources or the target
/// cannot give: an unknown resource, a slot without a resource, too many reduction slots.
pub fn lower(schedule: &Schedule, resources: &[ResourceDesc], start: &[usize], target: &Target) -> Result<Plan> {
    let bad = |message: String| Error::invalid("schedule", schedule.id(), message);
    if start.len() != resources.len() {
        return Err(bad(format!("an assignment of {} buffers for {} resources", start.len(), resources.len())));
    }
    let slots = schedule.reduction_slots();
    if slots > RESULT_SLOTS {
        return Err(bad(format!("it writes {slots} reduction slots; a schedule may write at most {RESULT_SLOTS}")));
    }
    // Each block at an aligned offset with room for the largest block after it (what a
    // backend binds at every offset).
    let stride = (PARAMS_MAX_BYTES as usize).next_multiple_of(target.param_align.max(1) as usize);
    let mut params: Vec<u8> = Vec::new();
    let mut offsets: HashMap<Vec<u8>, u32> = HashMap::new();
    let mut offset_of = |block: &[u8]| -> u32 {
        *offsets.entry(block.to_vec()).or_insert_with(|| {
            let o = params.len();
            params.extend_from_slice(block);
            params.resize(o + stride, 0);
            o as u32
        })
    };
    let check = |id: crate::ResourceId| -> Result<usize> {
        let desc = resources.get(id.index()).ok_or_else(|| bad(format!("no resource {}", id.0)))?;
        desc.check_grid(schedule.grid())?;
        Ok(id.index())
    };
    check_resources(schedule, resources)?;
    let mut map = start.to_vec();
    let mut invocations = Vec::new();
    for op in schedule.ops() {
        match op {
            Op::Swap(a, b) => {
                let (a, b) = (check(*a)?, check(*b)?);
                if resources[a].format != resources[b].format {
                    return Err(bad(format!(
                        "it swaps `{}` ({:?}) with `{}` ({:?}): a swap needs one format",
                        resources[a].name, resources[a].format, resources[b].name, resources[b].format
                    )));
                }
                map.swap(a, b);
            }
            Op::Dispatch(d) => {
                if d.resources.len() != d.kernel.bindings.len() {
                    return Err(bad(format!(
                        "{} binds {} resources to its {} slots",
                        d.kernel.name,
                        d.resources.len(),
                        d.kernel.bindings.len()
                    )));
                }
                let buffers =
                    d.resources.iter().map(|r| check(*r).map(|i| Buffer::Physical(map[i]))).collect::<Result<_>>()?;
                let half = half_slots(d.resources.iter().map(|r| resources[r.index()].format));
                let (gx, gy) = match d.kernel.workgroup {
                    Workgroup::Tiled => target.workgroup,
                    Workgroup::Covers(x, y) => (x, y),
                };
                invocations.push(Invocation {
                    kernel: d.kernel,
                    buffers,
                    half,
                    params: d.params.map(|p| offset_of(p.bytes())),
                    workgroups: (d.extent[0].div_ceil(gx), d.extent[1].div_ceil(gy)),
                    barrier: false,
                });
            }
            Op::Reduce { resource, op, slot } => {
                let r = check(*resource)?;
                let desc = &resources[r];
                if !desc.format.is_float() {
                    return Err(bad(format!("it reduces `{}`, whose values are not floats", desc.name)));
                }
                let p = ReduceParams::new(desc.scalars() as u32, *op, *slot);
                let half = u32::from(desc.format.is_half());
                let offset = offset_of(bytemuck::bytes_of(&p));
                let buffers = vec![Buffer::Physical(map[r]), Buffer::Partials, Buffer::Results];
                for (kernel, groups) in [(REDUCE_PARTIAL, p.partials), (REDUCE_FINAL, 1)] {
                    invocations.push(Invocation {
                        kernel,
                        buffers: buffers.clone(),
                        half,
                        params: Some(offset),
                        workgroups: (groups, 1),
                        barrier: false,
                    });
                }
            }
        }
    }
    place_barriers(&mut invocations);
    if params.len() < stride {
        params.resize(stride, 0);
    }
    Ok(Plan { schedule: schedule.id(), start: start.to_vec(), end: map, invocations, params, reduction_slots: slots })
}

/// The bit set of the slots whose format (in slot order) holds `f16` values.
pub fn half_slots(formats: impl Iterator<Item = crate::ir::resource::Format>) -> u32 {
    formats.enumerate().filter(|(_, f)| f.is_half()).fold(0, |mask, (i, _)| mask | 1 << i)
}

/// The largest parameter table of `schedules` lowered over `resources` for `target`: what a
/// GPU backend's parameter buffer grows to for them (a schedule that does not lower, which
/// no backend would run, counts nothing).
pub fn params_bytes(schedules: &[Schedule], resources: &[ResourceDesc], target: &Target) -> u64 {
    let start = crate::ir::resource::owners(resources);
    (schedules.iter())
        .filter_map(|s| lower(s, resources, &start, target).ok())
        .map(|p| p.params.len() as u64)
        .max()
        .unwrap_or(0)
}

/// What every backend checks before it runs `schedule` on `resources`: [`check_bindings`] and
/// [`check_transients`].
pub fn check_resources(schedule: &Schedule, resources: &[ResourceDesc]) -> Result<()> {
    check_bindings(schedule, resources)?;
    check_transients(schedule, resources)
}

/// An error unless every dispatch of `schedule` binds a resource with values to each slot its
/// kernel reads or writes: an empty resource (a field the scene does not hold) only to a slot
/// marked [`crate::ir::kernel::Binding::optional`]. Every backend checks this before it runs
/// a schedule, so a kernel never indexes a buffer that is not there.
pub fn check_bindings(schedule: &Schedule, resources: &[ResourceDesc]) -> Result<()> {
    for d in schedule.dispatches() {
        for (slot, id) in d.kernel.bindings.iter().zip(&d.resources) {
            if let Some(r) = resources.get(id.index())
                && r.is_empty()
                && !slot.optional
            {
                return Err(Error::invalid(
                    "schedule",
                    schedule.id(),
                    format!(
                        "`{}` binds `{}` to its slot `{}`, and the resources hold none of it (the scene \
                         declares it empty)",
                        d.kernel.name, r.name, slot.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// An error unless `schedule` treats the transient resources among `resources` as
/// [`crate::Lifetime::Transient`] says: never swapped, written before they are read (a first
/// binding that writes; a read-write binding counts as writing), and no two of one sharing
/// group live at once (a resource is live from its first operation to its last). Empty
/// resources are exempt (they hold nothing). Every backend checks this before it runs a
/// schedule, so sharing memory can never change a result.
pub fn check_transients(schedule: &Schedule, resources: &[ResourceDesc]) -> Result<()> {
    let bad = |message: String| Error::invalid("schedule", schedule.id(), message);
    let transient = |id: crate::ResourceId| resources.get(id.index()).filter(|r| r.shares().is_some() && !r.is_empty());
    if !resources.iter().any(|r| r.shares().is_some() && !r.is_empty()) {
        return Ok(());
    }
    let mut live: Vec<Option<(usize, usize)>> = vec![None; resources.len()];
    // Op `k` touches `id`, writing it or not.
    let mut touch = |k: usize, id: crate::ResourceId, writes: bool| -> Result<()> {
        let Some(r) = transient(id) else { return Ok(()) };
        match &mut live[id.index()] {
            None if !writes => return Err(bad(format!("it reads the transient `{}` before writing it", r.name))),
            None => live[id.index()] = Some((k, k)),
            Some(span) => span.1 = k,
        }
        Ok(())
    };
    for (k, op) in schedule.ops().iter().enumerate() {
        match op {
            Op::Swap(a, b) => {
                if let Some(r) = transient(*a).or(transient(*b)) {
                    return Err(bad(format!("it swaps `{}`, which is transient", r.name)));
                }
            }
            Op::Dispatch(d) => {
                for (r, b) in d.resources.iter().zip(d.kernel.bindings) {
                    touch(k, *r, b.access.writes())?;
                }
            }
            Op::Reduce { resource, .. } => touch(k, *resource, false)?,
        }
    }
    for (i, a) in live.iter().enumerate() {
        for (j, b) in live.iter().enumerate().skip(i + 1) {
            let (Some(a), Some(b)) = (a, b) else { continue };
            if resources[i].shares() == resources[j].shares() && a.0 <= b.1 && b.0 <= a.1 {
                return Err(bad(format!(
                    "`{}` and `{}` share memory (group `{}`) but are both live at operation {}",
                    resources[i].name,
                    resources[j].name,
                    resources[i].shares().unwrap_or_default(),
                    a.0.max(b.0)
                )));
            }
        }
    }
    Ok(())
}

/// Set [`Invocation::barrier`] where data flows.
fn place_barriers(invocations: &mut [Invocation]) {
    let mut written: Vec<Buffer> = Vec::new();
    let mut read: Vec<Buffer> = Vec::new();
    for inv in invocations {
        let bindings = inv.kernel.bindings;
        let writes = |i: usize| bindings[i].access.writes();
        inv.barrier =
            inv.buffers.iter().enumerate().any(|(i, b)| written.contains(b) || (writes(i) && read.contains(b)));
        if inv.barrier {
            written.clear();
            read.clear();
        }
        for (i, b) in inv.buffers.iter().enumerate() {
            if writes(i) {
                written.push(*b);
            } else {
                read.push(*b);
            }
        }
    }
}

/// Plans (or what a backend builds from them: bind groups, recorded command buffers) by
/// schedule identity and starting assignment, at most `capacity` of them, the oldest dropped
/// first. The swaps of a step permute the assignment with a short period, so a step and its
/// diagnostics cycle through a few entries.
#[derive(Debug)]
pub struct PlanCache<T> {
    capacity: usize,
    entries: Vec<(PlanKey, T)>,
}

/// A cache entry's key: the schedule's identity, the starting assignment, a variant (a
/// backend's own distinction, such as timing on or off).
type PlanKey = (u64, Vec<usize>, u32);

impl<T> PlanCache<T> {
    /// An empty cache of at most `capacity` entries.
    pub fn new(capacity: usize) -> PlanCache<T> {
        PlanCache { capacity: capacity.max(1), entries: Vec::new() }
    }

    /// The entry of (`schedule`, `start`, `variant`), if there is one.
    pub fn position(&self, schedule: u64, start: &[usize], variant: u32) -> Option<usize> {
        self.entries.iter().position(|((id, s, v), _)| *id == schedule && s == start && *v == variant)
    }

    /// The entry at `index`.
    pub fn get(&self, index: usize) -> &T {
        &self.entries[index].1
    }

    /// Add an entry; when full, the oldest is removed first and returned (for a backend to free).
    pub fn insert(&mut self, schedule: u64, start: &[usize], variant: u32, value: T) -> (usize, Option<T>) {
        let evicted = if self.entries.len() >= self.capacity { Some(self.entries.remove(0).1) } else { None };
        self.entries.push(((schedule, start.to_vec(), variant), value));
        (self.entries.len() - 1, evicted)
    }

    /// Whether it would evict an entry on the next insert.
    pub fn is_full(&self) -> bool {
        self.entries.len() >= self.capacity
    }

    /// Every entry, removed (for a backend to free).
    pub fn drain(&mut self) -> Vec<T> {
        self.entries.drain(..).map(|(_, v)| v).collect()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ResourceId;
    use crate::grid::{Boundary, FieldId, Grid, GridFields, kernels, step};
    use crate::ir::schedule::ReduceOp;
    use crate::params::PressureSolver;

    const TARGET: Target = Target { param_align: 64, workgroup: (16, 16) };

    fn every_plan() -> Vec<(String, Plan)> {
        crate::testing::every_plan(&TARGET)
    }

    /// Barriers stand exactly where data flows, on every plan of
    /// [`crate::testing::every_plan`]:
    /// - every two invocations that bind the same buffer, one of them writing it, have a barrier
    ///   between them (checked pair by pair over the whole plan, not by the running tracker);
    /// - every barrier is needed: the invocation after it conflicts that way with one since the
    ///   barrier before.
    ///
    /// Lavapipe runs one dispatch after another, so a missing barrier changes no result there;
    /// this is the check that runs in CI.
    #[test]
    fn barriers_stand_exactly_between_dependent_invocations() {
        let touches = |inv: &Invocation, buffer: Buffer| {
            let mut found = (false, false); // (binds it, writes it)
            for (i, b) in inv.buffers.iter().enumerate() {
                if *b == buffer {
                    found.0 = true;
                    found.1 |= inv.kernel.bindings[i].access.writes();
                }
            }
            found
        };
        let conflict = |a: &Invocation, b: &Invocation| {
            a.buffers.iter().chain(&b.buffers).any(|x| {
                let (ta, wa) = touches(a, *x);
                let (tb, wb) = touches(b, *x);
                ta && tb && (wa || wb)
            })
        };
        let (mut plans, mut invocations, mut placed) = (0, 0, 0);
        for (what, plan) in every_plan() {
            let inv = &plan.invocations;
            let barrier: Vec<bool> = inv.iter().map(|i| i.barrier).collect();
            plans += 1;
            invocations += inv.len();
            placed += barrier.iter().filter(|b| **b).count();
            for b in 0..inv.len() {
                for a in 0..b {
                    if conflict(&inv[a], &inv[b]) {
                        assert!(
                            barrier[a + 1..=b].iter().any(|x| *x),
                            "{what}: {} ({a}) and {} ({b}) share a buffer one of them writes, with no barrier \
                             between them",
                            inv[a].kernel.name,
                            inv[b].kernel.name
                        );
                    }
                }
                if barrier[b] {
                    let since = barrier[..b].iter().rposition(|x| *x).unwrap_or(0);
                    assert!(
                        (since..b).any(|a| conflict(&inv[a], &inv[b])),
                        "{what}: the barrier before {} ({b}) waits for nothing it reads or writes",
                        inv[b].kernel.name
                    );
                }
            }
        }
        // Not every invocation waits (independent ones share a barrier interval) and not none.
        assert!(placed > 0 && placed < invocations, "{placed} barriers over {invocations} invocations");
        assert!(plans >= 400, "{plans} plans");
    }

    /// A plan follows its schedule's swaps from the starting assignment, expands a reduction
    /// into its two passes over the partials and results, stores each distinct parameter
    /// block once at an aligned stride, and counts workgroups by the target's shape or the
    /// kernel's own.
    #[test]
    fn plans_follow_swaps_dedup_blocks_and_expand_reductions() {
        let grid = Grid::new(40, 30, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        let fields = GridFields::all(&grid);
        let n = fields.resources().len();
        // Start from an assignment where pressure and its partner are exchanged already.
        let (p, t) = (FieldId::Pressure.index(), FieldId::PressureTmp.index());
        let mut start: Vec<usize> = (0..n).collect();
        start.swap(p, t);
        let sweeps = step::jacobi_sweeps(&grid, PressureSolver::Jacobi, Some(0.8), 3);
        let plan = lower(&sweeps, fields.resources(), &start, &TARGET).expect("lowered");
        assert_eq!(plan.invocations.len(), 3);
        assert!(plan.invocations.iter().all(|i| i.kernel == kernels::JACOBI && i.workgroups == (3, 2)));
        // Three sweeps ping-pong and end with a swap back: the end is the start's buffers swapped.
        let mut end = start.clone();
        end.swap(p, t);
        assert_eq!(plan.end, end);
        assert_eq!(plan.invocations[0].buffers[0], Buffer::Physical(start[p]));
        // One block for the three sweeps but the first (which starts from the warm pressure:
        // all three are warm, so one block), at a stride of 64.
        assert_eq!(plan.params.len(), 64);
        assert!(plan.invocations.iter().all(|i| i.params == Some(0)));
        // A reduction: two passes, the second one workgroup.
        let mut b = Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]);
        b.reduce(ResourceId::from(FieldId::Density), ReduceOp::SumSquares, 5);
        let plan = lower(&b.build(), fields.resources(), &(0..n).collect::<Vec<_>>(), &TARGET).expect("lowered");
        let names: Vec<_> = plan.invocations.iter().map(|i| (i.kernel.name, i.workgroups)).collect();
        assert_eq!(names, [("reduce_partial", (2, 1)), ("reduce_final", (1, 1))]);
        assert_eq!(
            plan.invocations[0].buffers,
            [Buffer::Physical(FieldId::Density.index()), Buffer::Partials, Buffer::Results]
        );
        assert!(plan.invocations[1].barrier, "the final pass reads the partials the first wrote");
        assert_eq!(plan.reduction_slots, 6);
    }

    /// What a schedule asks that the resources cannot give is an error, not a panic: a
    /// resource past the list, an assignment of the wrong length, a reduction of words that
    /// are not `f32`.
    #[test]
    fn impossible_schedules_are_refused() {
        let grid = Grid::new(8, 6, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        let fields = GridFields::all(&grid);
        let few = &fields.resources()[..3];
        let start: Vec<usize> = (0..3).collect();
        let e = lower(&step::curl(&grid), few, &start, &TARGET).expect_err("curl past three resources");
        assert!(e.to_string().contains("no resource"), "{e}");
        let e = lower(&step::curl(&grid), fields.resources(), &start, &TARGET).expect_err("a short assignment");
        assert!(e.to_string().contains("assignment"), "{e}");
        let keys = ResourceDesc::new("keys", crate::Shape::Elements, crate::Format::U32, crate::Lifetime::Scratch, 10);
        let mut b = Schedule::builder([0; crate::ir::schedule::UNIFORM_BYTES], [0, 0]);
        b.reduce(ResourceId(0), ReduceOp::MaxAbs, 0);
        let e = lower(&b.build(), &[keys], &[0], &TARGET).expect_err("u32 words");
        assert!(e.to_string().contains("not floats"), "{e}");
        // A swap of two formats: buffers of two element sizes cannot trade places.
        let half = |name| ResourceDesc::new(name, crate::Shape::Cells, crate::Format::F16, crate::Lifetime::State, 10);
        let mut b = Schedule::builder([0; crate::ir::schedule::UNIFORM_BYTES], [0, 0]);
        b.swap(ResourceId(0), ResourceId(1));
        let full = ResourceDesc { format: crate::Format::F32, ..half("b") };
        let e = lower(&b.build(), &[half("a"), full], &[0, 1], &TARGET).expect_err("two formats");
        assert!(e.to_string().contains("one format"), "{e}");
    }

    #[test]
    fn the_cache_keys_plans_by_schedule_start_and_variant_and_evicts_the_oldest() {
        let mut c = PlanCache::new(2);
        assert!(c.is_empty());
        assert_eq!(c.insert(1, &[0, 1], 0, "a"), (0, None));
        assert_eq!(c.insert(1, &[1, 0], 0, "b"), (1, None));
        assert_eq!(c.position(1, &[1, 0], 0), Some(1));
        assert_eq!((c.position(1, &[1, 0], 1), c.position(2, &[1, 0], 0)), (None, None));
        assert!(c.is_full());
        assert_eq!(c.insert(2, &[0, 1], 1, "c"), (1, Some("a")));
        assert_eq!((c.position(1, &[0, 1], 0), c.position(2, &[0, 1], 1)), (None, Some(1)));
        assert_eq!(*c.get(0), "b");
        assert_eq!(c.drain(), ["b", "c"]);
        assert_eq!(c.len(), 0);
    }

    /// Transient resources share their group's largest member's memory, and a schedule that
    /// could see the sharing is refused: one that swaps a transient, reads one before writing
    /// it, or has two of a group live at once. The grid's declared `scratch` and multigrid
    /// workspace pass in every schedule ([`crate::testing::every_plan`]).
    #[test]
    fn transients_share_memory_only_where_no_schedule_can_tell() {
        use crate::{Format, Lifetime, Shape};
        let grid = Grid::new(8, 6, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        let fields = GridFields::all(&grid);
        let mut resources = fields.resources().to_vec();
        let t = Lifetime::Transient { shares: "w" };
        for f in [FieldId::Scratch, FieldId::Curl, FieldId::PressureTmp] {
            resources[f.index()].lifetime = t;
        }
        // The largest member owns the group, the first of equals; an empty one owns itself.
        resources[FieldId::PressureTmp.index()].len = 100;
        let own = crate::ir::resource::owners(&resources);
        let (s, c, p) = (FieldId::Scratch.index(), FieldId::Curl.index(), FieldId::PressureTmp.index());
        assert_eq!((own[s], own[c], own[p]), (p, p, p));
        resources[p].len = 0;
        let own = crate::ir::resource::owners(&resources);
        assert_eq!((own[s], own[c], own[p]), (c, c, p));
        assert_eq!(own[FieldId::U.index()], FieldId::U.index());
        let lone = ResourceDesc::new("x", Shape::Cells, Format::F32, Lifetime::Transient { shares: "z" }, 4);
        assert_eq!(crate::ir::resource::owners(&[lone]), [0]);

        let id = |f: FieldId| ResourceId::from(f);
        let mut b = Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]);
        b.dispatch(kernels::CURL, &[id(FieldId::U), id(FieldId::V), id(FieldId::Curl)], None, [8, 6]);
        b.dispatch(
            kernels::DIVERGENCE,
            &[id(FieldId::U), id(FieldId::V), id(FieldId::UFaces), id(FieldId::VFaces), id(FieldId::Scratch)],
            None,
            [8, 6],
        );
        let ok = b.build();
        check_transients(&ok, &resources).expect("curl dead before scratch is written");
        let cases: [(&str, Schedule); 3] = [
            ("live at operation 1", {
                let mut b = Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]);
                b.dispatch(kernels::CURL, &[id(FieldId::U), id(FieldId::V), id(FieldId::Curl)], None, [8, 6]);
                b.dispatch(
                    kernels::DIVERGENCE,
                    &[id(FieldId::U), id(FieldId::V), id(FieldId::UFaces), id(FieldId::VFaces), id(FieldId::Scratch)],
                    None,
                    [8, 6],
                );
                b.reduce(id(FieldId::Curl), ReduceOp::MaxAbs, 0);
                b.build()
            }),
            ("reads the transient `curl` before writing it", {
                let mut b = Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]);
                b.reduce(id(FieldId::Curl), ReduceOp::MaxAbs, 0);
                b.build()
            }),
            ("swaps `curl`", {
                let mut b = Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]);
                b.swap(id(FieldId::Curl), id(FieldId::Density));
                b.build()
            }),
        ];
        for (what, schedule) in cases {
            let e = check_transients(&schedule, &resources).expect_err(what).to_string();
            assert!(e.contains(what), "{e}");
            let start = crate::ir::resource::owners(&resources);
            assert!(lower(&schedule, &resources, &start, &TARGET).is_err(), "lowering refuses it too: {what}");
        }
    }

    /// The pressure's ping-pong partner is declared only for the sweeps that swap with it, and
    /// no other solver's schedules touch it.
    #[test]
    fn only_the_sweeps_declare_or_touch_the_pressures_partner() {
        use crate::ir::schedule::Op;
        let grid = Grid::new(20, 12, 0.1, Boundary::Wall, Boundary::Wall).expect("grid");
        let partner = ResourceId::from(FieldId::PressureTmp);
        for solver in [
            PressureSolver::Jacobi,
            PressureSolver::JacobiMultisweep,
            PressureSolver::Sor,
            PressureSolver::Relaxation,
            PressureSolver::Multigrid,
            PressureSolver::Mgpcg,
            PressureSolver::PoissonFilter,
        ] {
            let mut params = crate::Scene::preset("smoke").expect("preset").params;
            params.pressure.solver = solver;
            params.pressure.iterations = 8;
            let sweeps =
                matches!(solver, PressureSolver::Jacobi | PressureSolver::JacobiMultisweep | PressureSolver::Sor);
            assert_eq!(GridFields::declare(&grid, &params).has(FieldId::PressureTmp), sweeps, "{solver:?}");
            for schedule in [step::step(&grid, &params), step::initialize(&grid, &params), step::setup(&grid, &params)]
            {
                let touches = schedule.ops().iter().any(|op| match op {
                    Op::Dispatch(d) => d.resources.contains(&partner),
                    Op::Swap(a, b) => *a == partner || *b == partner,
                    Op::Reduce { resource, .. } => *resource == partner,
                });
                assert!(sweeps || !touches, "{solver:?} touches pressure_tmp");
            }
        }
    }

    /// A schedule that binds an empty resource to a slot its kernel needs is refused before it
    /// runs (Jacobi sweeps on a multigrid scene, which holds no `pressure_tmp`); the optional
    /// slots (fields a scene may not carry) take empty resources.
    #[test]
    fn empty_resources_bind_only_to_optional_slots() {
        let grid = Grid::new(20, 12, 0.1, Boundary::Wall, Boundary::Wall).expect("grid");
        let mut params = crate::Scene::preset("smoke").expect("preset").params;
        params.pressure.solver = PressureSolver::Multigrid;
        let fields = GridFields::declare(&grid, &params);
        let sweeps = step::jacobi_sweeps(&grid, PressureSolver::Jacobi, None, 2);
        let e = check_bindings(&sweeps, fields.resources()).expect_err("no pressure_tmp").to_string();
        assert!(e.contains("`jacobi`") && e.contains("`pressure_tmp`"), "{e}");
        let start = crate::ir::resource::owners(fields.resources());
        assert!(lower(&sweeps, fields.resources(), &start, &TARGET).is_err());
        // Smoke carries no dye: the step binds the empty dye to optional slots only.
        assert!(!fields.has(FieldId::Dye));
        check_bindings(&step::step(&grid, &params), fields.resources()).expect("optional slots");
    }
}
