//! Command buffers, and the recorder that writes into them and checks each command.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, MutexGuard};

use ash::vk;
use swirly_ir::Result;

use super::buffer::Buffer;
use super::context::{Context, Fence, Retired};
use super::pipeline::{DescriptorSet, Pipeline, QueryPool};
use crate::{err, vk_err};

/// The pool a command buffer comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PoolKind {
    /// Recorded once (recordings of schedules, the step-input uploads).
    Once = 0,
    /// Recorded again and again (the one-off submissions, queued reads).
    Reusable = 1,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Initial,
    Executable {
        simultaneous: bool,
        one_time: bool,
    },
    /// Left mid-recording or failed to end: recorded again before use.
    Invalid,
}

/// A primary command buffer, and what its commands use, kept alive with it.
pub(crate) struct CommandBuffer {
    ctx: Arc<Context>,
    pool: usize,
    pub(super) handle: vk::CommandBuffer,
    state: State,
    submitted: AtomicBool,
    /// The latest submission of it (0: none).
    last_serial: AtomicU64,
    buffers: Vec<Arc<Buffer>>,
    queries: Vec<Arc<QueryPool>>,
    pipelines: Vec<Arc<Pipeline>>,
    sets: Vec<Arc<DescriptorSet>>,
}

impl CommandBuffer {
    pub(crate) fn new(ctx: &Arc<Context>, kind: PoolKind) -> Result<CommandBuffer> {
        let pool = ctx.pools[kind as usize].lock().unwrap_or_else(|e| e.into_inner());
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(*pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the pool is this device's and its lock is held.
        let handle = unsafe { ctx.device.allocate_command_buffers(&info) }
            .map_err(|e| vk_err("vkAllocateCommandBuffers", e))?[0];
        drop(pool);
        Ok(CommandBuffer {
            ctx: ctx.clone(),
            pool: kind as usize,
            handle,
            state: State::Initial,
            submitted: AtomicBool::new(false),
            last_serial: AtomicU64::new(0),
            buffers: Vec::new(),
            queries: Vec::new(),
            pipelines: Vec::new(),
            sets: Vec::new(),
        })
    }

    /// Start recording (again: only from the reusable pool, once its last submission is done).
    pub(crate) fn begin(&mut self, usage: vk::CommandBufferUsageFlags) -> Result<Recorder<'_>> {
        if self.state != State::Initial && self.pool != PoolKind::Reusable as usize {
            return Err(err("a command buffer of the record-once pool recorded twice"));
        }
        if !self.ctx.is_complete(self.last_serial.load(Ordering::Acquire)) {
            return Err(err("a command buffer recorded again while the GPU may run it"));
        }
        self.release_kept();
        self.state = State::Invalid;
        self.submitted.store(false, Ordering::Release);
        let info = vk::CommandBufferBeginInfo::default().flags(usage);
        {
            let _pool = self.pool_lock();
            // SAFETY: the buffer is this device's, not pending (checked), its pool resets
            // buffers when begun (the reusable pool) or it was never begun; the pool is held.
            unsafe { self.ctx.device.begin_command_buffer(self.handle, &info) }
                .map_err(|e| vk_err("vkBeginCommandBuffer", e))?;
        }
        Ok(Recorder { cb: self, usage, pipeline: None, sets_bound: false, seen: HashSet::new(), ended: false })
    }

    /// Let go of what its commands use, once its last submission is done; it must be recorded
    /// again before it is submitted.
    pub(crate) fn release(&mut self) {
        if self.ctx.is_complete(self.last_serial.load(Ordering::Acquire)) {
            self.release_kept();
            if self.state != State::Initial {
                self.state = State::Invalid;
            }
        }
    }

    fn release_kept(&mut self) {
        self.buffers.clear();
        self.queries.clear();
        self.pipelines.clear();
        self.sets.clear();
    }

    fn pool_lock(&self) -> MutexGuard<'_, vk::CommandPool> {
        self.ctx.pools[self.pool].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `ctx` may submit it now.
    fn check_submittable(&self, ctx: &Context, what: &str) -> Result<()> {
        let State::Executable { simultaneous, one_time } = self.state else {
            return Err(err(format!("{what}: a command buffer that is not recorded")));
        };
        if !std::ptr::eq(Arc::as_ptr(&self.ctx), ctx) {
            return Err(err(format!("{what}: another device's command buffer")));
        }
        if one_time && self.submitted.load(Ordering::Acquire) {
            return Err(err(format!("{what}: a one-time command buffer submitted twice")));
        }
        if !simultaneous && !ctx.is_complete(self.last_serial.load(Ordering::Acquire)) {
            return Err(err(format!("{what}: a command buffer submitted while still pending")));
        }
        Ok(())
    }

    /// It and what it uses were submitted as `serial`.
    fn mark(&self, serial: u64) {
        self.submitted.store(true, Ordering::Release);
        self.last_serial.fetch_max(serial, Ordering::AcqRel);
        for b in &self.buffers {
            b.last_use.fetch_max(serial, Ordering::AcqRel);
        }
        for q in &self.queries {
            q.last_use.fetch_max(serial, Ordering::AcqRel);
        }
    }
}

impl Drop for CommandBuffer {
    fn drop(&mut self) {
        let tag = *self.last_serial.get_mut();
        self.ctx.retire(tag, Retired::CommandBuffer(self.pool, self.handle));
    }
}

/// Submit `cbs` to `ctx`'s queue, signalling `fence` (see [`Context::submit`]): each must be
/// `ctx`'s, recorded, not a one-time buffer submitted before, and not pending unless recorded
/// for simultaneous use. It and what it uses are marked with the submission's serial, all
/// while the queue is held.
pub(crate) fn submit(ctx: &Context, what: &str, cbs: &[&CommandBuffer], fence: &Fence) -> Result<()> {
    let queue = ctx.lock_queue();
    for cb in cbs {
        cb.check_submittable(ctx, what)?;
    }
    let handles: Vec<vk::CommandBuffer> = cbs.iter().map(|cb| cb.handle).collect();
    let serial = ctx.submit(&queue, what, &handles, fence)?;
    for cb in cbs {
        cb.mark(serial);
    }
    Ok(())
}

/// Records into a command buffer; each command checks its arguments and keeps what it uses.
pub(crate) struct Recorder<'a> {
    cb: &'a mut CommandBuffer,
    usage: vk::CommandBufferUsageFlags,
    pipeline: Option<Arc<Pipeline>>,
    sets_bound: bool,
    /// Buffers kept already (by address).
    seen: HashSet<usize>,
    ended: bool,
}

impl Recorder<'_> {
    fn keep(&mut self, buffer: &Arc<Buffer>) {
        if self.seen.insert(Arc::as_ptr(buffer) as usize) {
            self.cb.buffers.push(buffer.clone());
        }
    }

    fn same_device(&self, buffer: &Buffer) -> Result<()> {
        if Arc::ptr_eq(buffer.context(), &self.cb.ctx) { Ok(()) } else { Err(err("another device's buffer")) }
    }

    /// Every earlier command's writes visible to every later command (submission order alone
    /// gives command buffers no memory dependency).
    pub(crate) fn full_barrier(&mut self) {
        self.barrier(
            (vk::PipelineStageFlags::ALL_COMMANDS, vk::AccessFlags::MEMORY_WRITE),
            (vk::PipelineStageFlags::ALL_COMMANDS, vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE),
        );
    }

    /// A global memory barrier from `src` (stages, accesses) to `dst`.
    pub(crate) fn barrier(
        &mut self,
        src: (vk::PipelineStageFlags, vk::AccessFlags),
        dst: (vk::PipelineStageFlags, vk::AccessFlags),
    ) {
        let barrier = vk::MemoryBarrier::default().src_access_mask(src.1).dst_access_mask(dst.1);
        let _pool = self.cb.pool_lock();
        // SAFETY: recording, the pool held; a global memory barrier names no resources.
        unsafe {
            self.cb.ctx.device.cmd_pipeline_barrier(
                self.cb.handle,
                src.0,
                dst.0,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            )
        };
    }

    /// Copy `regions` from `src` to `dst` (two buffers).
    pub(crate) fn copy(&mut self, src: &Arc<Buffer>, dst: &Arc<Buffer>, regions: &[vk::BufferCopy]) -> Result<()> {
        self.same_device(src)?;
        self.same_device(dst)?;
        let inside = |r: &vk::BufferCopy| {
            r.size > 0
                && r.src_offset.checked_add(r.size).is_some_and(|end| end <= src.size())
                && r.dst_offset.checked_add(r.size).is_some_and(|end| end <= dst.size())
        };
        if Arc::ptr_eq(src, dst)
            || !src.usage.contains(vk::BufferUsageFlags::TRANSFER_SRC)
            || !dst.usage.contains(vk::BufferUsageFlags::TRANSFER_DST)
            || regions.is_empty()
            || !regions.iter().all(inside)
        {
            return Err(err("a copy outside its buffers, or between buffers that cannot copy"));
        }
        self.keep(src);
        self.keep(dst);
        let _pool = self.cb.pool_lock();
        // SAFETY: recording, the pool held; both buffers are this device's, alive (kept), of
        // transfer usage, distinct, and every region lies inside both.
        unsafe { self.cb.ctx.device.cmd_copy_buffer(self.cb.handle, src.handle, dst.handle, regions) };
        Ok(())
    }

    /// Fill the whole of `dst` with zeros.
    pub(crate) fn zero(&mut self, dst: &Arc<Buffer>) -> Result<()> {
        self.same_device(dst)?;
        if !dst.usage.contains(vk::BufferUsageFlags::TRANSFER_DST) || !dst.size().is_multiple_of(4) {
            return Err(err("a fill of a buffer that cannot take it"));
        }
        self.keep(dst);
        let _pool = self.cb.pool_lock();
        // SAFETY: recording, the pool held; the buffer is this device's, alive (kept), of
        // transfer-destination usage, and its size a multiple of 4.
        unsafe { self.cb.ctx.device.cmd_fill_buffer(self.cb.handle, dst.handle, 0, dst.size(), 0) };
        Ok(())
    }

    /// Bind a compute pipeline; its descriptor sets must be bound again before a dispatch.
    pub(crate) fn bind_pipeline(&mut self, pipeline: &Arc<Pipeline>) -> Result<()> {
        if !Arc::ptr_eq(pipeline.context(), &self.cb.ctx) {
            return Err(err("another device's pipeline"));
        }
        if self.pipeline.as_ref().is_some_and(|p| Arc::ptr_eq(p, pipeline)) {
            return Ok(());
        }
        if !self.cb.pipelines.iter().any(|p| Arc::ptr_eq(p, pipeline)) {
            self.cb.pipelines.push(pipeline.clone());
        }
        {
            let _pool = self.cb.pool_lock();
            // SAFETY: recording, the pool held; the pipeline is this device's and alive (kept).
            unsafe {
                self.cb.ctx.device.cmd_bind_pipeline(self.cb.handle, vk::PipelineBindPoint::COMPUTE, pipeline.handle)
            };
        }
        self.pipeline = Some(pipeline.clone());
        self.sets_bound = false;
        Ok(())
    }

    /// Bind one descriptor set per set layout of the bound pipeline, with the dynamic offsets
    /// of their dynamic bindings, in order.
    pub(crate) fn bind_sets(&mut self, sets: &[&Arc<DescriptorSet>], dynamic: &[u32]) -> Result<()> {
        let Some(pipeline) = self.pipeline.clone() else {
            return Err(err("descriptor sets bound before a pipeline"));
        };
        let fits = sets.len() == pipeline.sets.len()
            && sets.iter().zip(&pipeline.sets).all(|(s, l)| Arc::ptr_eq(&s.layout, l))
            && dynamic.len() == pipeline.sets.iter().map(|l| l.dynamic_count()).sum::<usize>();
        if !fits {
            return Err(err("descriptor sets that do not fit the bound pipeline"));
        }
        let align = self.cb.ctx.limits().uniform_offset_alignment;
        let views = sets.iter().flat_map(|s| s.dynamic.iter());
        if !views
            .zip(dynamic)
            .all(|(&(range, size), &offset)| u64::from(offset) % align == 0 && u64::from(offset) + range <= size)
        {
            return Err(err("a dynamic offset outside its buffer or misaligned"));
        }
        for s in sets {
            if !self.cb.sets.iter().any(|k| Arc::ptr_eq(k, s)) {
                self.cb.sets.push((*s).clone());
            }
            for b in &s.buffers {
                self.keep(b);
            }
        }
        let handles: Vec<vk::DescriptorSet> = sets.iter().map(|s| s.handle).collect();
        {
            let _pool = self.cb.pool_lock();
            // SAFETY: recording, the pool held; the sets are alive (kept), written, of the
            // pipeline's layouts (checked), with one aligned in-bounds offset per dynamic binding.
            unsafe {
                self.cb.ctx.device.cmd_bind_descriptor_sets(
                    self.cb.handle,
                    vk::PipelineBindPoint::COMPUTE,
                    pipeline.layout(),
                    0,
                    &handles,
                    dynamic,
                )
            };
        }
        self.sets_bound = true;
        Ok(())
    }

    /// Dispatch the bound pipeline over `groups` workgroups.
    pub(crate) fn dispatch(&mut self, groups: [u32; 3]) -> Result<()> {
        let max = self.cb.ctx.limits().max_workgroups;
        if !self.sets_bound || groups.iter().zip(max).any(|(&g, m)| g > m) {
            return Err(err(format!("a dispatch of {groups:?} workgroups without its sets, or past {max:?}")));
        }
        let _pool = self.cb.pool_lock();
        // SAFETY: recording, the pool held; a pipeline and sets of its layouts are bound; the
        // counts are within the device's limits.
        unsafe { self.cb.ctx.device.cmd_dispatch(self.cb.handle, groups[0], groups[1], groups[2]) };
        Ok(())
    }

    /// Reset every query of `pool`.
    pub(crate) fn reset_queries(&mut self, pool: &Arc<QueryPool>) {
        if !self.cb.queries.iter().any(|q| Arc::ptr_eq(q, pool)) {
            self.cb.queries.push(pool.clone());
        }
        let _cb_pool = self.cb.pool_lock();
        // SAFETY: recording, the pool held; the query pool is alive (kept) and the range is its own.
        unsafe { self.cb.ctx.device.cmd_reset_query_pool(self.cb.handle, pool.handle, 0, pool.count) };
    }

    /// Write a timestamp into query `index` of `pool` (reset earlier in this recording).
    pub(crate) fn timestamp(&mut self, pool: &Arc<QueryPool>, index: u32) -> Result<()> {
        if index >= pool.count || !self.cb.queries.iter().any(|q| Arc::ptr_eq(q, pool)) {
            return Err(err("a timestamp outside its query pool, or in one not reset"));
        }
        let _cb_pool = self.cb.pool_lock();
        // SAFETY: recording, the pool held; the query lies in the pool, reset by this recording.
        unsafe {
            self.cb.ctx.device.cmd_write_timestamp(
                self.cb.handle,
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                pool.handle,
                index,
            )
        };
        Ok(())
    }

    /// Finish recording: the command buffer is ready to submit.
    pub(crate) fn end(mut self) -> Result<()> {
        self.ended = true;
        let ended = {
            let _pool = self.cb.pool_lock();
            // SAFETY: the command buffer is recording; the pool is held.
            unsafe { self.cb.ctx.device.end_command_buffer(self.cb.handle) }
        };
        ended.map_err(|e| vk_err("vkEndCommandBuffer", e))?;
        self.cb.state = State::Executable {
            simultaneous: self.usage.contains(vk::CommandBufferUsageFlags::SIMULTANEOUS_USE),
            one_time: self.usage.contains(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
        };
        Ok(())
    }
}

impl Drop for Recorder<'_> {
    fn drop(&mut self) {
        if !self.ended {
            let _pool = self.cb.pool_lock();
            // SAFETY: the command buffer is recording; the pool is held. It stays invalid.
            let _ = unsafe { self.cb.ctx.device.end_command_buffer(self.cb.handle) };
        }
    }
}
