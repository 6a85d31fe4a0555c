//! The [`Backend`] trait for [`VulkanBackend`].

use std::sync::Arc;
use std::time::Duration;

use ash::vk;
use swirly_ir::backend::{self, PendingRead, ReadPlan, f32s_le, u32s_le};
use swirly_ir::lower::{self, Target};
use swirly_ir::resource;
use swirly_ir::schedule::RESULT_SLOTS;
use swirly_ir::uniforms::REDUCE_MAX_PARTIALS;
use swirly_ir::uniforms::StepUniform;
use swirly_ir::wait;
use swirly_ir::{
    Backend, Error, KernelTiming, MemoryReport, ResourceDesc, ResourceId, Result, Schedule, StepInputs,
    TimestampTimings,
};

use super::{MAX_RECORDINGS, RECORDS_OFFSET, RING, Resources, VulkanBackend, WORKGROUP};
use crate::raw::{self, Buffer, Location};
use crate::{NAME, err};

impl Backend for VulkanBackend {
    fn name(&self) -> &'static str {
        NAME
    }

    fn device(&self) -> String {
        format!("{} (Vulkan {}, {})", self.summary.name, self.summary.api_version, self.summary.device_type)
    }

    fn allocate(&mut self, resources: &[ResourceDesc]) -> Result<()> {
        if let Some(r) = resources.iter().find(|r| r.bytes() > self.max_binding) {
            return Err(Error::OutOfMemory {
                what: format!("resource `{}`", r.name),
                bytes: r.bytes(),
                reason: format!("{} binds at most {} bytes per storage buffer", self.summary.name, self.max_binding),
            });
        }
        self.wait_all()?;
        self.recordings.drain();
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC
            | vk::BufferUsageFlags::TRANSFER_DST;
        // Each resource's buffer at its own index: the one it had (wherever swaps had put it)
        // when its description is the same, else a new one; the buffers of resources gone go.
        // Transient resources share their group owner's buffer and keep nothing.
        let owners = resource::owners(resources);
        let mut buffers: Vec<Option<Arc<Buffer>>> = Vec::with_capacity(resources.len());
        let mut fresh = Vec::new();
        for (i, r) in resources.iter().enumerate() {
            if owners[i] != i {
                buffers.push(None);
                continue;
            }
            if r.shares().is_none() && self.res.descs.get(i) == Some(r) {
                buffers.push(Some(self.res.buffers[self.res.map[i]].clone()));
                continue;
            }
            let name = format!("fluid.{}", r.name);
            let b = Buffer::new(&self.ctx, &name, r.bytes(), usage, Location::Device, true).map_err(|e| {
                Error::OutOfMemory {
                    what: format!("resource `{}`", r.name),
                    bytes: r.bytes(),
                    reason: format!("{}: {e}", self.summary.name),
                }
            })?;
            let b = Arc::new(b);
            fresh.push(b.clone());
            buffers.push(Some(b));
        }
        let buffers = (0..resources.len()).map(|i| buffers[owners[i]].clone()).collect::<Option<Vec<_>>>();
        let buffers = buffers.ok_or_else(|| err("a transient resource without its group's buffer"))?;
        self.res = Resources { descs: resources.to_vec(), buffers, map: owners };
        if fresh.is_empty() {
            return Ok(());
        }
        self.once("zero-filling the new resources", |r| fresh.iter().try_for_each(|b| r.zero(b)))
    }

    fn resources(&self) -> &[ResourceDesc] {
        &self.res.descs
    }

    fn write(&mut self, id: ResourceId, bytes: &[u8]) -> Result<()> {
        backend::desc(&self.res.descs, id, NAME)?.check_bytes(bytes.len())?;
        if bytes.is_empty() {
            return Ok(());
        }
        let dst = self.buffer_of(id).clone();
        let usage = vk::BufferUsageFlags::TRANSFER_SRC;
        let staging =
            Arc::new(Buffer::new(&self.ctx, "fluid.upload", bytes.len() as u64, usage, Location::Upload, false)?);
        staging.write(0, bytes)?;
        let region = [vk::BufferCopy { src_offset: 0, dst_offset: 0, size: bytes.len() as u64 }];
        self.once("upload", |r| r.copy(&staging, &dst, &region))
    }

    fn read(&mut self, id: ResourceId) -> Result<Vec<u32>> {
        self.read_whole(id, u32s_le)
    }

    fn download(&mut self, id: ResourceId) -> Result<Vec<f32>> {
        let desc = backend::desc(&self.res.descs, id, NAME)?.clone();
        self.read_whole(id, |m| desc.values_le(m))
    }

    fn download_at(&mut self, id: ResourceId, indices: &[usize]) -> Result<Vec<f32>> {
        if indices.is_empty() {
            return Ok(Vec::new());
        }
        self.gather(id, indices)
    }

    fn queue_download_at(&mut self, id: ResourceId, indices: &[usize]) -> Result<PendingRead> {
        self.sweep_reads()?;
        if indices.is_empty() {
            return Ok(PendingRead::ready(NAME, Vec::new()));
        }
        let plan = ReadPlan::at(id, backend::desc(&self.res.descs, id, NAME)?, indices)?;
        self.queue_read(plan)
    }

    fn queue_download(&mut self, id: ResourceId) -> Result<PendingRead> {
        self.sweep_reads()?;
        let plan = ReadPlan::whole(id, backend::desc(&self.res.descs, id, NAME)?);
        self.queue_read(plan)
    }

    fn poll_download(&mut self, read: &mut PendingRead) -> Result<Option<Vec<f32>>> {
        self.poll_read(read)
    }

    fn queued_reads(&self) -> usize {
        self.reads.len()
    }

    fn wait_download(&mut self, read: PendingRead) -> Result<Vec<f32>> {
        self.wait_read(read)
    }

    fn run(&mut self, schedule: &Schedule, inputs: &StepInputs) -> Result<()> {
        if self.res.descs.is_empty() {
            return Err(Error::NotAllocated(NAME));
        }
        inputs.check_records()?;
        if self.uniform.as_ref() != Some(schedule.uniform()) {
            // The recordings in flight read the uniform buffer: write it once they are done.
            self.wait_all()?;
            self.uniform_buf.write(0, schedule.uniform())?;
            self.uniform = Some(*schedule.uniform());
        }
        self.grow_records(inputs.records.bytes().len())?;
        let timed = self.timing.is_some();
        let index = match self.recordings.position(schedule.id(), &self.res.map, u32::from(timed)) {
            Some(i) => i,
            None => {
                if self.recordings.is_full() {
                    self.wait_all()?;
                }
                self.ensure_pipelines(schedule)?;
                let rec = self.record(schedule, timed)?;
                let start = self.res.map.clone();
                self.recordings.insert(schedule.id(), &start, u32::from(timed), rec).0
            }
        };

        // This submission's staging slot: wait for its previous use, then write the inputs.
        let k = self.next_slot;
        self.next_slot = (k + 1) % RING;
        let slot = &self.ring[k];
        slot.fence.wait(self.spin, "waiting for a staging slot")?;
        slot.staging.write(0, bytemuck::bytes_of(&inputs.uniform()))?;
        slot.staging.write(RECORDS_OFFSET as usize, inputs.records.bytes())?;
        let rec = self.recordings.get(index);
        let cbs: Vec<&raw::CommandBuffer> = std::iter::once(&slot.upload).chain(&rec.cbs).collect();
        raw::submit(&self.ctx, "run", &cbs, &slot.fence)?;
        self.last_slot = Some(k);
        self.reduction_slots = rec.plan.reduction_slots;
        self.res.map.clone_from(&rec.plan.end);

        if timed {
            self.ring[k].fence.wait(self.spin, "waiting for timed run")?;
            let rec = self.recordings.get(index);
            if let Some((pool, entries)) = &rec.queries {
                let ticks = pool.results()?;
                let period = self.ctx.limits().timestamp_period_ns;
                if let Some(t) = self.timing.as_mut() {
                    t.add(entries, &ticks, period);
                }
            }
        }
        self.validated("run")
    }

    fn reductions(&mut self) -> Result<Vec<f64>> {
        if self.reduction_slots == 0 {
            return Ok(Vec::new());
        }
        if let Some(k) = self.last_slot {
            self.ring[k].fence.wait(self.spin, "waiting for reductions")?;
        }
        let values = self.results_read.read(4 * self.reduction_slots, f32s_le)?;
        Ok(values.iter().map(|x| f64::from(*x)).collect())
    }

    fn finish(&mut self) -> Result<()> {
        self.wait_all()?;
        self.validated("finish")
    }

    fn working_memory(&self, resources: &[ResourceDesc], schedules: &[Schedule]) -> u64 {
        // Every buffer is at least 16 bytes, rounded up to the device's memory requirements
        // (counted as up to PAD each).
        const PAD: u64 = 4096;
        let owners = resource::owners(resources);
        let buffers = (0..resources.len()).filter(|i| owners[*i] == *i).count() as u64;
        let target = Target { param_align: self.align as u32, workgroup: WORKGROUP };
        // A parameter buffer per cached recording.
        let params = MAX_RECORDINGS as u64 * (lower::params_bytes(schedules, resources, &target) + PAD);
        // The record buffer and the ring of step-input staging buffers, grown to the most records.
        let records = backend::MAX_RECORD_BYTES.next_power_of_two() as u64;
        let step_inputs = records + PAD + RING as u64 * (RECORDS_OFFSET + records + PAD);
        let fixed = swirly_ir::schedule::UNIFORM_BYTES as u64
            + 16
            + 4 * u64::from(REDUCE_MAX_PARTIALS)
            + 2 * 4 * RESULT_SLOTS as u64
            + 5 * PAD;
        // The kept read-back buffers, and one whole resource read or written through a staging
        // buffer of its own.
        let reads = (1 + super::reads::SPARE_READS as u64) * (backend::Gather::KEPT_BYTES + PAD);
        let largest = resources.iter().map(ResourceDesc::bytes).max().unwrap_or(0) + PAD;
        buffers * PAD + params + step_inputs + fixed + reads + largest
    }

    fn memory(&self) -> Result<MemoryReport> {
        let owners = resource::owners(&self.res.descs);
        let resources: Vec<(&'static str, u64)> = (self.res.descs.iter().enumerate())
            .map(|(i, r)| (r.name, if owners[i] == i { self.res.buffers[self.res.map[i]].allocated() } else { 0 }))
            .collect();
        let (total, reserved) = self.ctx.memory();
        Ok(MemoryReport { resources, total, reserved, peak: self.ctx.peak().max(total) })
    }

    fn copy_bandwidth(&mut self) -> Result<f64> {
        self.wait_all()?;
        let peak = self.ctx.peak();
        let measured = self.bandwidth();
        // The measurement's two large buffers are not the simulation's memory.
        self.ctx.restore_peak(peak);
        measured
    }

    fn set_timing(&mut self, enabled: bool) -> Result<()> {
        if enabled && !self.timestamps {
            return Err(Error::Unsupported {
                what: "per-kernel timings (timestamp queries)".into(),
                by: format!("the device {}", self.summary.name),
            });
        }
        self.timing = enabled.then(TimestampTimings::default);
        Ok(())
    }

    fn take_timings(&mut self) -> Result<Vec<KernelTiming>> {
        Ok(self.timing.as_mut().ok_or_else(|| err("timings were not enabled"))?.take())
    }

    fn wait_spin(&self) -> Option<Duration> {
        Some(self.spin)
    }

    fn set_wait_spin(&mut self, spin: Duration) -> Result<()> {
        self.spin = wait::checked(spin)?;
        Ok(())
    }
}

/// The step uniform's size, which the upload command copies.
const _: () = assert!(size_of::<StepUniform>() <= RECORDS_OFFSET as usize);
