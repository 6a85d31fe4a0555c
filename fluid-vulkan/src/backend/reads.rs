//! Reads back to the host: whole resources, gathered values, and queued reads that do not wait.

use std::sync::Arc;

use ash::vk;
use swirly_ir::backend::{self, Gather, PendingRead, ReadPlan, f32s_le, pick};
use swirly_ir::{ResourceId, Result};

use super::{VulkanBackend, record_for_host};
use crate::NAME;
use crate::raw::{self, Buffer, CommandBuffer, Fence, Location, PoolKind};

/// Slots of finished queued reads kept for the next ones; more are dropped.
pub(super) const SPARE_READS: usize = 4;

/// What a queued read submits with, kept for the next one when it is done: on an H100,
/// creating a fence and a command buffer cost ten times the rest of a read.
pub(super) struct ReadSlot {
    pub(super) fence: Fence,
    cb: CommandBuffer,
    /// A read-back buffer of [`Gather::KEPT_BYTES`].
    buf: Arc<Buffer>,
}

/// What a queued read keeps: its slot, and the read-back buffer of a read larger than the
/// slot's.
pub(super) struct QueuedRead {
    pub(super) slot: ReadSlot,
    big: Option<Arc<Buffer>>,
}

/// The copy regions of `runs` (`(first value, count)` of a field), packed one after another
/// from the start of the destination.
fn copy_regions(runs: &[(usize, usize)]) -> Vec<vk::BufferCopy> {
    let mut at = 0u64;
    runs.iter()
        .map(|&(start, n)| {
            let r = vk::BufferCopy { src_offset: start as u64 * 4, dst_offset: at, size: n as u64 * 4 };
            at += r.size;
            r
        })
        .collect()
}

impl VulkanBackend {
    fn readback(&self, name: &str, bytes: u64) -> Result<Arc<Buffer>> {
        let usage = vk::BufferUsageFlags::TRANSFER_DST;
        Ok(Arc::new(Buffer::new(&self.ctx, name, bytes, usage, Location::Readback, false)?))
    }

    /// A whole resource read back, converted from its bytes in one pass by `convert`.
    pub(super) fn read_whole<T>(&mut self, id: ResourceId, convert: impl FnOnce(&[u8]) -> Vec<T>) -> Result<Vec<T>> {
        let bytes = backend::desc(&self.res.descs, id, NAME)?.bytes();
        if bytes == 0 {
            return Ok(Vec::new());
        }
        let src = self.buffer_of(id).clone();
        let staging = self.readback("fluid.download", bytes)?;
        let region = [vk::BufferCopy { src_offset: 0, dst_offset: 0, size: bytes }];
        self.once("download", |r| r.copy(&src, &staging, &region))?;
        staging.read(bytes as usize, convert)
    }

    /// The values of `id` at `indices` (see [`swirly_ir::Backend::download_at`]).
    pub(super) fn gather(&mut self, id: ResourceId, indices: &[usize]) -> Result<Vec<f32>> {
        let desc = backend::desc(&self.res.descs, id, NAME)?;
        let name = desc.name;
        if desc.format.is_half() {
            let desc = desc.clone();
            return pick(name, &self.read_whole(id, |m| desc.values_le(m))?, indices);
        }
        let Some(gather) = Gather::plan(name, desc.words() as usize, indices)? else {
            return pick(name, &self.read_whole(id, f32s_le)?, indices);
        };
        let src = self.buffer_of(id).clone();
        let size = gather.unique.len() as u64 * 4;
        let regions = copy_regions(&gather.runs);
        // A few values (a game's samples every frame) go through the kept buffer; more through
        // one of their own.
        let staging = if size <= Gather::KEPT_BYTES {
            match &self.gather_read {
                Some(b) => b.clone(),
                None => {
                    let b = self.readback("fluid.download_at", Gather::KEPT_BYTES)?;
                    self.gather_read = Some(b.clone());
                    b
                }
            }
        } else {
            self.readback("fluid.download_at", size)?
        };
        self.once("download_at", |r| r.copy(&src, &staging, &regions))?;
        staging.read(size as usize, |m| gather.scatter(indices, &f32s_le(m)))
    }

    /// A new slot for queued reads.
    fn read_slot(&mut self) -> Result<ReadSlot> {
        Ok(ReadSlot {
            buf: self.readback("fluid.queue_download_at", Gather::KEPT_BYTES)?,
            fence: Fence::new(&self.ctx)?,
            cb: CommandBuffer::new(&self.ctx, PoolKind::Reusable)?,
        })
    }

    /// A finished (or never submitted) read's slot back to the spares where there is room.
    fn release_read(&mut self, mut slot: ReadSlot) {
        slot.cb.release();
        if self.spare_reads.len() < SPARE_READS && !slot.fence.pending() {
            self.spare_reads.push(slot);
        }
    }

    /// Free the reads whose [`PendingRead`] was dropped and whose copy is done.
    pub(super) fn sweep_reads(&mut self) -> Result<()> {
        let mut freed = Vec::new();
        self.reads.sweep(|r| r.slot.fence.done(), |r| freed.push(r))?;
        for r in freed {
            self.release_read(r.slot);
        }
        Ok(())
    }

    /// The values of a queued read whose copy is done.
    fn read_values(r: &QueuedRead, plan: &ReadPlan) -> Result<Vec<f32>> {
        let buf = r.big.as_ref().unwrap_or(&r.slot.buf);
        buf.read(plan.bytes() as usize, |m| plan.decode(m)).and_then(|v| plan.finish(v))
    }

    /// Submit the copy of a queued read (see [`swirly_ir::Backend::queue_download_at`]).
    pub(super) fn queue_read(&mut self, plan: ReadPlan) -> Result<PendingRead> {
        let src = self.buffer_of(plan.resource()).clone();
        let regions = copy_regions(&plan.runs());
        let bytes = plan.bytes();
        let mut slot = match self.spare_reads.pop() {
            Some(slot) => slot,
            None => self.read_slot()?,
        };
        let big = if bytes > Gather::KEPT_BYTES { Some(self.readback("fluid.queue_download", bytes)?) } else { None };
        let dst = big.as_ref().unwrap_or(&slot.buf).clone();
        record_for_host(&mut slot.cb, |r| r.copy(&src, &dst, &regions))?;
        raw::submit(&self.ctx, "queue_download", &[&slot.cb], &slot.fence)?;
        let read = self.reads.push(QueuedRead { slot, big }, plan);
        self.validated("queue_download")?;
        Ok(read)
    }

    /// See [`swirly_ir::Backend::poll_download`].
    pub(super) fn poll_read(&mut self, read: &mut PendingRead) -> Result<Option<Vec<f32>>> {
        let mut freed = None;
        let got = self.reads.poll(
            read,
            |r| r.slot.fence.done(),
            |r, plan| {
                let values = VulkanBackend::read_values(&r, plan);
                freed = Some(r);
                values
            },
        )?;
        if let Some(r) = freed {
            self.release_read(r.slot);
        }
        if got.is_none() {
            self.sweep_reads()?;
        }
        Ok(got)
    }

    /// See [`swirly_ir::Backend::wait_download`].
    pub(super) fn wait_read(&mut self, read: PendingRead) -> Result<Vec<f32>> {
        let spin = self.spin;
        let mut freed = None;
        let values = self.reads.wait(
            read,
            |r| r.slot.fence.wait(spin, "waiting for a queued read"),
            |r, plan| {
                let values = VulkanBackend::read_values(&r, plan);
                freed = Some(r);
                values
            },
        );
        if let Some(r) = freed {
            self.release_read(r.slot);
        }
        values
    }
}
