//! One lowering for every GPU backend: a [`Schedule`] becomes a [`Plan`] of invocations on
//! physical buffers, with their workgroup counts, the barriers between dependent ones and one
//! table of parameter blocks. Both GPU backends execute plans; they decide nothing else.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::kernel::{Kernel, Workgroup};
use crate::resource::ResourceDesc;
use crate::schedule::{Op, RESULT_SLOTS, Schedule};
use crate::uniforms::{PARAMS_MAX_BYTES, REDUCE_FINAL, REDUCE_PARTIAL, ReduceParams};

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
    let check = |id: crate::resource::ResourceId| -> Result<usize> {
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
pub fn half_slots(formats: impl Iterator<Item = crate::resource::Format>) -> u32 {
    formats.enumerate().filter(|(_, f)| f.is_half()).fold(0, |mask, (i, _)| mask | 1 << i)
}

/// The largest parameter table of `schedules` lowered over `resources` for `target`: what a
/// GPU backend's parameter buffer grows to for them (a schedule that does not lower, which
/// no backend would run, counts nothing).
pub fn params_bytes(schedules: &[Schedule], resources: &[ResourceDesc], target: &Target) -> u64 {
    let start = crate::resource::owners(resources);
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
/// marked [`crate::kernel::Binding::optional`]. Every backend checks this before it runs
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
/// [`crate::resource::Lifetime::Transient`] says: never swapped, written before they are read (a first
/// binding that writes; a read-write binding counts as writing), and no two of one sharing
/// group live at once (a resource is live from its first operation to its last). Empty
/// resources are exempt (they hold nothing). Every backend checks this before it runs a
/// schedule, so sharing memory can never change a result.
pub fn check_transients(schedule: &Schedule, resources: &[ResourceDesc]) -> Result<()> {
    let bad = |message: String| Error::invalid("schedule", schedule.id(), message);
    let transient =
        |id: crate::resource::ResourceId| resources.get(id.index()).filter(|r| r.shares().is_some() && !r.is_empty());
    if !resources.iter().any(|r| r.shares().is_some() && !r.is_empty()) {
        return Ok(());
    }
    let mut live: Vec<Option<(usize, usize)>> = vec![None; resources.len()];
    // Op `k` touches `id`, writing it or not.
    let mut touch = |k: usize, id: crate::resource::ResourceId, writes: bool| -> Result<()> {
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
}
