//! Reads back to the host: whole resources, gathered values, and queued reads that do not wait.

use std::sync::{Arc, OnceLock};

use swirly_ir::backend::{self, Gather, PendingRead, ReadPlan, f32s_le, pick};
use swirly_ir::wait;
use swirly_ir::{ResourceId, Result};

use super::WgpuBackend;
use crate::device::{NAME, backend_err, copy_runs, map_read, poll, uniform_buffer};

/// What a queued read keeps: its read-back buffer, being mapped (the map callback sets the
/// result).
pub(super) struct ReadSlot {
    pub(super) buffer: wgpu::Buffer,
    mapped: Arc<OnceLock<std::result::Result<(), wgpu::BufferAsyncError>>>,
}

/// Kept-size read-back buffers of finished queued reads waiting for the next ones; more are
/// dropped.
pub(super) const SPARE_READS: usize = 4;

impl WgpuBackend {
    /// A whole resource read back, converted from its bytes in one pass by `convert`.
    pub(super) fn read_scoped<T>(&mut self, id: ResourceId, convert: impl FnOnce(&[u8]) -> Vec<T>) -> Result<Vec<T>> {
        let bytes = backend::desc(&self.res.descs, id, NAME)?.bytes();
        if bytes == 0 {
            return Ok(Vec::new());
        }
        let staging = uniform_buffer(
            &self.device,
            "fluid.download",
            bytes,
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        self.note_peak(bytes);
        let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("download") });
        enc.copy_buffer_to_buffer(&self.res.buffers[self.res.map[id.index()]], 0, &staging, 0, bytes);
        self.queue.submit([enc.finish()]);
        let values = map_read(&self.device, &staging, self.spin, |m| convert(&m[..bytes as usize]))?;
        self.check_errors("download")?;
        Ok(values)
    }

    pub(super) fn download_at_scoped(&mut self, id: ResourceId, indices: &[usize]) -> Result<Vec<f32>> {
        let desc = backend::desc(&self.res.descs, id, NAME)?;
        let name = desc.name;
        if desc.format.is_half() {
            let desc = desc.clone();
            return pick(name, &self.read_scoped(id, |m| desc.values_le(m))?, indices);
        }
        let Some(gather) = Gather::plan(name, desc.words() as usize, indices)? else {
            return pick(name, &self.read_scoped(id, f32s_le)?, indices);
        };
        let size = (gather.unique.len() as u64 * 4).max(16);
        let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        // A few values (a game's samples every frame) go through the kept buffer; more through
        // one of their own.
        let staging = if size <= Gather::KEPT_BYTES {
            let device = &self.device;
            self.gather_read
                .get_or_insert_with(|| uniform_buffer(device, "fluid.download_at", Gather::KEPT_BYTES, usage))
                .clone()
        } else {
            uniform_buffer(&self.device, "fluid.download_at", size, usage)
        };
        self.note_peak(if size <= Gather::KEPT_BYTES { 0 } else { staging.size() });
        let mut enc =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("download_at") });
        copy_runs(&mut enc, &self.res.buffers[self.res.map[id.index()]], &staging, &gather.runs);
        self.queue.submit([enc.finish()]);
        let fetched = map_read(&self.device, &staging, self.spin, |m| f32s_le(&m[..gather.unique.len() * 4]))?;
        self.check_errors("download_at")?;
        Ok(gather.scatter(indices, &fetched))
    }

    /// Submit the copy of a queued read (see [`swirly_ir::Backend::queue_download_at`]) and map its
    /// buffer once it is done.
    pub(super) fn queue_read(&mut self, plan: ReadPlan) -> Result<PendingRead> {
        let bytes = plan.bytes();
        let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        let buffer = match self.spare_reads.pop() {
            Some(b) if bytes <= Gather::KEPT_BYTES => b,
            spare => {
                self.spare_reads.extend(spare);
                let size = if bytes <= Gather::KEPT_BYTES { Gather::KEPT_BYTES } else { bytes.max(16) };
                uniform_buffer(&self.device, "fluid.queue_download", size, usage)
            }
        };
        let src = &self.res.buffers[self.res.map[plan.resource().index()]];
        let mut enc =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("queue_download") });
        copy_runs(&mut enc, src, &buffer, &plan.runs());
        self.queue.submit([enc.finish()]);
        // Mapped once the copy is done: wgpu orders the map after the submission using the buffer.
        let mapped = Arc::new(OnceLock::new());
        let set = Arc::clone(&mapped);
        buffer.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = set.set(r);
        });
        self.check_errors("queue_download")?;
        let read = self.reads.push(ReadSlot { buffer, mapped }, plan);
        self.note_peak(0);
        Ok(read)
    }

    /// A taken or dropped read's buffer back to the spares (unmapped) when it is of the kept
    /// size and there is room; otherwise dropped.
    fn release_read(&mut self, slot: ReadSlot) {
        let mapped = matches!(slot.mapped.get(), Some(Ok(())));
        if mapped {
            slot.buffer.unmap();
        }
        if mapped && slot.buffer.size() == Gather::KEPT_BYTES && self.spare_reads.len() < SPARE_READS {
            self.spare_reads.push(slot.buffer);
        }
    }

    /// Free the reads whose [`PendingRead`] was dropped and whose map is done.
    pub(super) fn sweep_reads(&mut self) -> Result<()> {
        let mut freed = Vec::new();
        self.reads.sweep(|slot| Ok(slot.mapped.get().is_some()), |slot| freed.push(slot))?;
        for slot in freed {
            self.release_read(slot);
        }
        Ok(())
    }

    /// See [`swirly_ir::Backend::poll_download`].
    pub(super) fn poll_read(&mut self, read: &mut PendingRead) -> Result<Option<Vec<f32>>> {
        poll(&self.device, wgpu::PollType::Poll)?;
        let mut freed = None;
        let got = self.reads.poll(
            read,
            |slot| Ok(slot.mapped.get().is_some()),
            |slot, plan| {
                let values = slot_values(&slot, plan);
                freed = Some(slot);
                values
            },
        )?;
        if let Some(slot) = freed {
            self.release_read(slot);
        }
        if got.is_none() {
            self.sweep_reads()?;
        }
        Ok(got)
    }

    /// See [`swirly_ir::Backend::wait_download`].
    pub(super) fn wait_read(&mut self, read: PendingRead) -> Result<Vec<f32>> {
        let (device, spin) = (&self.device, self.spin);
        let mut freed = None;
        let values = self.reads.wait(
            read,
            |slot| {
                let done = wait::poll_for(spin, || {
                    poll(device, wgpu::PollType::Poll)?;
                    Ok(slot.mapped.get().is_some())
                })?;
                if !done {
                    poll(device, wgpu::PollType::wait_indefinitely())?;
                }
                Ok(())
            },
            |slot, plan| {
                let values = slot_values(&slot, plan);
                freed = Some(slot);
                values
            },
        );
        if let Some(slot) = freed {
            self.release_read(slot);
        }
        values
    }
}

/// The values of a queued read whose map is done, from its buffer.
fn slot_values(slot: &ReadSlot, plan: &ReadPlan) -> Result<Vec<f32>> {
    match slot.mapped.get() {
        Some(Ok(())) => {
            let view = slot.buffer.slice(..).get_mapped_range();
            match view.map(|m| plan.decode(&m[..plan.bytes() as usize])) {
                Ok(fetched) => plan.finish(fetched),
                Err(e) => Err(backend_err(format!("cannot read a buffer back: {e}"))),
            }
        }
        Some(Err(e)) => Err(backend_err(format!("cannot read a buffer back: {e}"))),
        None => Err(backend_err("a queued read's buffer was never mapped (the map callback did not run)")),
    }
}
