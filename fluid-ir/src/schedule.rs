//! The step as data: a [`Schedule`] is the ordered operations of one step (or of a diagnostic
//! pass) over a model's resources, built once and replayed by a backend, which decides nothing
//! about the physics. What changes every step (dt, splats) travels apart, in
//! [`crate::backend::StepInputs`].

use crate::kernel::PARAMS_MAX_BYTES;
use crate::kernel::{Kernel, ParamsBlock};
use crate::resource::ResourceId;

/// A kernel's parameter block: the bytes of a [`ParamsBlock`] struct, kept inline.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParamBlock {
    len: u8,
    bytes: [u8; PARAMS_MAX_BYTES as usize],
}

impl std::fmt::Debug for ParamBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ParamBlock({:?})", self.bytes())
    }
}

impl ParamBlock {
    /// The block of `p`.
    pub fn new<T: ParamsBlock>(p: &T) -> ParamBlock {
        let src = bytemuck::bytes_of(p);
        let mut bytes = [0u8; PARAMS_MAX_BYTES as usize];
        bytes[..src.len()].copy_from_slice(src);
        ParamBlock { len: src.len() as u8, bytes }
    }

    /// Its bytes, as a GPU backend uploads them.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// Most binding slots a kernel may have (the descriptor test checks every kernel).
pub const MAX_BINDINGS: usize = 16;

/// The resources of a dispatch, one per binding slot, kept inline: a solve of thousands of
/// dispatches is built without an allocation per dispatch.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    len: u8,
    ids: [ResourceId; MAX_BINDINGS],
}

impl Bound {
    /// `ids`, at most [`MAX_BINDINGS`] of them.
    ///
    /// # Panics
    /// When there are more: a kernel descriptor with too many bindings is a programming error.
    pub fn new(ids: &[ResourceId]) -> Bound {
        assert!(ids.len() <= MAX_BINDINGS, "{} bindings, at most {MAX_BINDINGS}", ids.len());
        let mut b = Bound { len: ids.len() as u8, ids: [ResourceId(0); MAX_BINDINGS] };
        b.ids[..ids.len()].copy_from_slice(ids);
        b
    }
}

impl std::ops::Deref for Bound {
    type Target = [ResourceId];
    fn deref(&self) -> &[ResourceId] {
        &self.ids[..usize::from(self.len)]
    }
}

impl<'a> IntoIterator for &'a Bound {
    type Item = &'a ResourceId;
    type IntoIter = std::slice::Iter<'a, ResourceId>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl std::fmt::Debug for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// One kernel invocation over resources.
#[derive(Clone, Debug, PartialEq)]
pub struct Dispatch {
    /// Which kernel.
    pub kernel: Kernel,
    /// One resource per binding slot of the kernel, in order.
    pub resources: Bound,
    /// Its parameter block, when the kernel reads one.
    pub params: Option<ParamBlock>,
    /// Invocations `[x, y]`.
    pub extent: [u32; 2],
}

impl Dispatch {
    /// The resource bound to the named slot; `None` where the kernel has no such slot.
    pub fn resource(&self, slot: &str) -> Option<ResourceId> {
        self.kernel.slot(slot).map(|i| self.resources[i])
    }

    /// The parameter block as `T`, when the kernel reads a block of that type.
    pub fn params<T: ParamsBlock>(&self) -> Option<T> {
        match (self.kernel.params, self.params) {
            (Some(desc), Some(block)) if desc.name == T::NAME => Some(bytemuck::pod_read_unaligned(block.bytes())),
            _ => None,
        }
    }
}

/// A reduction to a scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// `max |x|`; NaN when any value is NaN, else +inf when any is infinite (every backend
    /// compares the bits of |x|, so a non-finite value is never skipped).
    MaxAbs,
    /// `Σ x²`.
    SumSquares,
}

/// One operation of a schedule.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Run a kernel.
    Dispatch(Dispatch),
    /// Exchange the buffers behind two resources (ping-pong, no copy).
    Swap(ResourceId, ResourceId),
    /// Reduce a resource's `f32` values to a scalar in result slot `slot`, read back with
    /// [`crate::backend::Backend::reductions`].
    Reduce {
        /// The resource reduced.
        resource: ResourceId,
        /// How.
        op: ReduceOp,
        /// Where the result goes.
        slot: usize,
    },
}

/// Most reduction result slots a schedule may write.
pub const RESULT_SLOTS: usize = 16;

/// Bytes of the model's uniform block (group 0, binding 0 of every kernel).
pub const UNIFORM_BYTES: usize = 192;

/// The ordered operations of one step (or pass), with the model uniform every kernel sees.
///
/// Built by a [`ScheduleBuilder`] and immutable after: its [`Schedule::id`], a hash of its
/// content, names it in a backend's caches of plans and recordings, so a schedule built again
/// the same (a solve of the same length, a step after `set_params` back) finds what was
/// recorded for the first.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    id: u64,
    uniform: [u8; UNIFORM_BYTES],
    grid: [u32; 2],
    ops: Vec<Op>,
}

impl Schedule {
    /// Its identity: equal schedules have equal ids, and different ones differ (a 64-bit hash
    /// of the uniform, the grid and every op).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The model's uniform block (group 0, binding 0 of every kernel).
    pub fn uniform(&self) -> &[u8; UNIFORM_BYTES] {
        &self.uniform
    }

    /// The model grid (`nx`, `ny`) it was built for: the resources it binds must be counted
    /// on it ([`crate::resource::ResourceDesc::grid`]).
    pub fn grid(&self) -> [u32; 2] {
        self.grid
    }

    /// The operations, in order.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// The dispatches, in order.
    pub fn dispatches(&self) -> impl Iterator<Item = &Dispatch> {
        self.ops.iter().filter_map(|op| match op {
            Op::Dispatch(d) => Some(d),
            _ => None,
        })
    }

    /// Number of reduction result slots the schedule writes.
    pub fn reduction_slots(&self) -> usize {
        self.ops
            .iter()
            .filter_map(|op| match op {
                Op::Reduce { slot, .. } => Some(slot + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// A builder of a schedule for the model uniform `uniform` on the model grid `grid`.
    pub fn builder(uniform: [u8; UNIFORM_BYTES], grid: [u32; 2]) -> ScheduleBuilder {
        ScheduleBuilder { uniform, grid, ops: Vec::new() }
    }
}

/// Collects a schedule's operations; [`ScheduleBuilder::build`] gives it its identity.
#[derive(Clone, Debug)]
pub struct ScheduleBuilder {
    uniform: [u8; UNIFORM_BYTES],
    grid: [u32; 2],
    ops: Vec<Op>,
}

impl ScheduleBuilder {
    /// Run `kernel` over `extent` invocations with one resource per slot.
    pub fn dispatch(&mut self, kernel: Kernel, resources: &[ResourceId], params: Option<ParamBlock>, extent: [u32; 2]) {
        debug_assert_eq!(resources.len(), kernel.bindings.len(), "{}: a resource per slot", kernel.name);
        debug_assert_eq!(params.is_some(), kernel.params.is_some(), "{}: its parameter block", kernel.name);
        self.ops.push(Op::Dispatch(Dispatch { kernel, resources: Bound::new(resources), params, extent }));
    }

    /// Append an op as it is (a copy of another schedule's, say).
    pub fn push(&mut self, op: Op) {
        match op {
            Op::Dispatch(d) => self.dispatch(d.kernel, &d.resources, d.params, d.extent),
            Op::Swap(a, b) => self.swap(a, b),
            Op::Reduce { resource, op, slot } => self.reduce(resource, op, slot),
        }
    }

    /// Exchange the buffers behind `a` and `b`.
    pub fn swap(&mut self, a: ResourceId, b: ResourceId) {
        self.ops.push(Op::Swap(a, b));
    }

    /// Reduce `resource` by `op` into result slot `slot`.
    pub fn reduce(&mut self, resource: ResourceId, op: ReduceOp, slot: usize) {
        debug_assert!(slot < RESULT_SLOTS, "slot {slot}");
        self.ops.push(Op::Reduce { resource, op, slot });
    }

    /// Append every operation of `other` (built for the same uniform).
    pub fn extend(&mut self, other: &Schedule) {
        self.ops.extend_from_slice(&other.ops);
    }

    /// The operations so far.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// The schedule, with an identity of its own: one hash of every op's bytes, laid out
    /// with a tag and lengths so that different op lists never give the same bytes.
    pub fn build(self) -> Schedule {
        let mut bytes = Vec::with_capacity(64 * self.ops.len() + 40);
        bytes.extend_from_slice(&self.uniform);
        // Native byte order: an identity lives within one process.
        let words = |bytes: &mut Vec<u8>, xs: &[u32]| bytes.extend_from_slice(bytemuck::cast_slice(xs));
        words(&mut bytes, &self.grid);
        for op in &self.ops {
            match op {
                Op::Dispatch(d) => {
                    let params = d.params.as_ref().map_or(&[][..], ParamBlock::bytes);
                    bytes.push(0);
                    words(&mut bytes, &[d.kernel.name.len() as u32, d.resources.len() as u32, params.len() as u32]);
                    bytes.extend_from_slice(d.kernel.name.as_bytes());
                    words(&mut bytes, bytemuck::cast_slice(&d.resources));
                    bytes.push(u8::from(d.params.is_some()));
                    bytes.extend_from_slice(params);
                    words(&mut bytes, &d.extent);
                }
                Op::Swap(a, b) => {
                    bytes.push(1);
                    words(&mut bytes, &[a.0, b.0]);
                }
                Op::Reduce { resource, op, slot } => {
                    bytes.push(2);
                    words(&mut bytes, &[resource.0, *op as u32, *slot as u32]);
                }
            }
        }
        Schedule { id: xxhash_rust::xxh3::xxh3_64(&bytes), uniform: self.uniform, grid: self.grid, ops: self.ops }
    }
}
