//! Pipelines, bind groups and runs: a schedule's plan, lowered once per starting assignment of
//! resources to buffers and kept with its bind groups, and each run encoded into one command
//! encoder and submitted.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use swirly_ir::kernel::Access;
use swirly_ir::lower::{Buffer, Plan, Target, lower};
use swirly_ir::schedule::RESULT_SLOTS;
use swirly_ir::uniforms::PARAMS_MAX_BYTES;
use swirly_ir::{Error, Kernel, Result, Schedule, StepInputs};
use swirly_shaders as shaders;

use super::{MAX_IN_FLIGHT, WgpuBackend};
use crate::device::{NAME, backend_err, map_read, poll, uniform_buffer};

/// Bytes bound for a parameter block: the largest block of the kernels.
const PARAMS_BINDING: u64 = PARAMS_MAX_BYTES;

pub(super) struct Pipeline {
    pipeline: wgpu::ComputePipeline,
    group0: wgpu::BindGroupLayout,
    group1: wgpu::BindGroupLayout,
    has_params: bool,
    has_records: bool,
}

impl WgpuBackend {
    /// Make `kernel`'s pipeline and bind group layouts at its first use (its shader module
    /// once per file), so a backend builds only what its schedules run.
    fn ensure_pipeline(&mut self, kernel: Kernel) -> Result<()> {
        if self.pipelines.contains_key(kernel.name) {
            return Ok(());
        }
        let stem = kernel.module;
        if !self.modules.contains_key(stem) {
            let src = shaders::overridden_source(stem, &self.overrides, self.workgroup)
                .ok_or_else(|| backend_err(format!("no shader {stem}")))?;
            let module = self.module(stem, src);
            self.modules.insert(stem, module);
        }
        let uniform = |binding: u32, dynamic: bool| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: dynamic,
                min_binding_size: None,
            },
            count: None,
        };
        let storage_entry = |binding: u32, writable: bool| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: !writable },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let (has_params, has_records) = (kernel.params.is_some(), kernel.records);
        let mut g0 = vec![uniform(0, false), uniform(1, false)];
        if has_params {
            g0.push(uniform(2, true));
        }
        if has_records {
            g0.push(storage_entry(3, false));
        }
        let g1: Vec<_> = (kernel.bindings.iter().enumerate())
            .map(|(i, b)| storage_entry(i as u32, b.access != Access::Read))
            .collect();
        let label = format!("fluid.{}", kernel.name);
        let group0 = self
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(&label), entries: &g0 });
        let group1 = self
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(&label), entries: &g1 });
        let pipeline = self.compute_pipeline(kernel, &self.modules[stem], &group0, &group1);
        self.pipelines.insert(kernel.name, Pipeline { pipeline, group0, group1, has_params, has_records });
        Ok(())
    }

    fn module(&self, name: &str, src: String) -> wgpu::ShaderModule {
        self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&format!("fluid.{name}")),
            source: wgpu::ShaderSource::Wgsl(src.into()),
        })
    }

    fn compute_pipeline(
        &self,
        kernel: Kernel,
        module: &wgpu::ShaderModule,
        group0: &wgpu::BindGroupLayout,
        group1: &wgpu::BindGroupLayout,
    ) -> wgpu::ComputePipeline {
        let label = format!("fluid.{}", kernel.name);
        let layout = self.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(&label),
            bind_group_layouts: &[Some(group0), Some(group1)],
            immediate_size: 0,
        });
        self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&label),
            layout: Some(&layout),
            module,
            entry_point: Some(kernel.name),
            compilation_options: Default::default(),
            cache: None,
        })
    }

    /// The pipeline of `kernel` with the binding slots of `half` (a bit each) in `f16`
    /// storage, the backend's [`HalfStorage`] way, made at its first use (the same bind group
    /// layouts as the kernel's own).
    fn variant(&mut self, kernel: Kernel, half: u32) -> Result<wgpu::ComputePipeline> {
        if half == 0 {
            return Ok(self.pipelines[kernel.name].pipeline.clone());
        }
        if let Some(p) = self.variants.get(&(kernel.name, half)) {
            return Ok(p.clone());
        }
        let stem = kernel.module;
        let src = shaders::overridden_source(stem, &self.overrides, self.workgroup)
            .and_then(|s| shaders::half_variant(&s, half, self.half_storage))
            .ok_or_else(|| backend_err(format!("no f16 variant of {stem} for slots {half:#b}")))?;
        let module = self.module(stem, src);
        let base = &self.pipelines[kernel.name];
        let pipeline = self.compute_pipeline(kernel, &module, &base.group0, &base.group1);
        self.variants.insert((kernel.name, half), pipeline.clone());
        Ok(pipeline)
    }

    fn group0(&mut self, entry: &'static str) -> wgpu::BindGroup {
        if let Some(g) = self.group0.get(entry) {
            return g.clone();
        }
        let p = &self.pipelines[entry];
        let mut entries = vec![
            wgpu::BindGroupEntry { binding: 0, resource: self.uniform_buf.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: self.step_buf.as_entire_binding() },
        ];
        if p.has_params {
            entries.push(wgpu::BindGroupEntry {
                binding: 2,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &self.params_buf,
                    offset: 0,
                    size: wgpu::BufferSize::new(PARAMS_BINDING),
                }),
            });
        }
        if p.has_records {
            entries.push(wgpu::BindGroupEntry { binding: 3, resource: self.record_buf.as_entire_binding() });
        }
        let g = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(entry),
            layout: &p.group0,
            entries: &entries,
        });
        self.group0.insert(entry, g.clone());
        g
    }

    /// The storage bind group of `entry` over `buffers`.
    fn group1(&mut self, entry: &'static str, buffers: &[Buffer]) -> wgpu::BindGroup {
        if let Some(g) = self.group1.get(&(entry, buffers.to_vec())) {
            return g.clone();
        }
        let entries: Vec<_> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let buffer = match b {
                    Buffer::Partials => &self.partials_buf,
                    Buffer::Results => &self.results_buf,
                    Buffer::Physical(p) => &self.res.buffers[*p],
                };
                wgpu::BindGroupEntry { binding: i as u32, resource: buffer.as_entire_binding() }
            })
            .collect();
        let g = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(entry),
            layout: &self.pipelines[entry].group1,
            entries: &entries,
        });
        self.group1.insert((entry, buffers.to_vec()), g.clone());
        g
    }

    /// Lower `schedule` from the current assignment and make its bind groups.
    fn encode_plan(&mut self, schedule: &Schedule) -> Result<Encoded> {
        let target = Target { param_align: self.align as u32, workgroup: self.workgroup };
        let plan = lower(schedule, &self.res.descs, &self.res.map, &target)?;
        for inv in &plan.invocations {
            self.ensure_pipeline(inv.kernel)?;
        }
        // Grown before any bind group is made: growing drops the cached ones.
        self.ensure_capacity(Grown::Params, plan.params.len() as u64);
        let recorded = plan
            .invocations
            .iter()
            .map(|inv| {
                Ok(Recorded {
                    kernel: inv.kernel,
                    pipeline: self.variant(inv.kernel, inv.half)?,
                    group0: self.group0(inv.kernel.name),
                    offset: inv.params,
                    group1: self.group1(inv.kernel.name, &inv.buffers),
                    workgroups: inv.workgroups,
                })
            })
            .collect::<Result<_>>()?;
        Ok(Encoded { recorded, plan })
    }

    /// Grow a per-step input buffer to hold `needed` bytes (its bind groups, and the plans
    /// holding them, are rebuilt).
    fn ensure_capacity(&mut self, which: Grown, needed: u64) {
        let (buf, usage, label) = match which {
            Grown::Records => (&mut self.record_buf, wgpu::BufferUsages::STORAGE, "fluid.records"),
            Grown::Params => (&mut self.params_buf, wgpu::BufferUsages::UNIFORM, "fluid.params"),
        };
        if buf.size() >= needed {
            return;
        }
        // The new buffer is made while the old one is held.
        let grown = needed.next_power_of_two();
        self.note_peak(grown);
        let buf = match which {
            Grown::Records => &mut self.record_buf,
            Grown::Params => &mut self.params_buf,
        };
        *buf = uniform_buffer(&self.device, label, needed.next_power_of_two(), usage | wgpu::BufferUsages::COPY_DST);
        self.group0.clear();
        self.plans.drain();
        if which == Grown::Params {
            self.written_params.clear();
        }
    }

    pub(super) fn run_scoped(&mut self, schedule: &Schedule, inputs: &StepInputs) -> Result<()> {
        if self.res.descs.is_empty() {
            return Err(Error::NotAllocated(NAME));
        }
        if self.uniform.as_ref() != Some(schedule.uniform()) {
            // Writes land before the next submission; those before it keep their uniform.
            self.queue.write_buffer(&self.uniform_buf, 0, schedule.uniform());
            self.uniform = Some(*schedule.uniform());
        }
        // Per-step inputs: one uniform and the records, written before the submission.
        self.queue.write_buffer(&self.step_buf, 0, bytemuck::bytes_of(&inputs.uniform()));
        let records = inputs.records.bytes();
        self.ensure_capacity(Grown::Records, records.len().max(64) as u64);
        if !records.is_empty() {
            self.queue.write_buffer(&self.record_buf, 0, records);
        }

        let pi = match self.plans.position(schedule.id(), &self.res.map, 0) {
            Some(i) => i,
            None => {
                let encoded = self.encode_plan(schedule)?;
                let start = self.res.map.clone();
                self.plans.insert(schedule.id(), &start, 0, encoded).0
            }
        };
        let params = &self.plans.get(pi).plan.params;
        if *params != self.written_params {
            self.queue.write_buffer(&self.params_buf, 0, params);
            self.written_params.clone_from(params);
        }
        let timed = self.timing.is_some() && self.timestamps;
        let (encoders, resolve) = self.encode_run(pi, timed);
        // Each timestamp chunk's resolve and read-back buffers, held until the submission.
        self.note_peak(resolve.iter().map(|b| 2 * b.size()).sum());
        let index = self.queue.submit(encoders.into_iter().map(wgpu::CommandEncoder::finish));
        self.track(index)?;
        self.res.map.clone_from(&self.plans.get(pi).plan.end);
        self.reduction_slots = self.plans.get(pi).plan.reduction_slots;
        if timed {
            self.collect_timings(pi, &resolve)?;
        }
        self.check_errors("run")
    }

    /// Plan `pi` encoded: its command encoders (one per [`MAX_PER_BUFFER`] invocations, each
    /// dispatch a timestamped pass of its own when `timed`), the reductions' results copied
    /// for reading, and the read-back buffers of the timestamps.
    fn encode_run(&self, pi: usize, timed: bool) -> (Vec<wgpu::CommandEncoder>, Vec<wgpu::Buffer>) {
        let encoded = self.plans.get(pi);
        let (recorded, slots) = (&encoded.recorded, encoded.plan.reduction_slots);

        let mut query_sets = Vec::new();
        if timed {
            for chunk in recorded.chunks(2048) {
                let set = self.device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("fluid.timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2 * chunk.len() as u32,
                });
                query_sets.push(set);
            }
        }
        // One command buffer per MAX_PER_BUFFER invocations, submitted together.
        let mut encoders = Vec::with_capacity(recorded.len().div_ceil(MAX_PER_BUFFER).max(1));
        let new_encoder =
            || self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("fluid.step") });
        for (c, chunk) in recorded.chunks(MAX_PER_BUFFER).enumerate() {
            let mut enc = new_encoder();
            if timed {
                for (j, r) in chunk.iter().enumerate() {
                    let k = c * MAX_PER_BUFFER + j;
                    let set = &query_sets[k / 2048];
                    let q = 2 * (k % 2048) as u32;
                    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some(r.kernel.name),
                        timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                            query_set: set,
                            beginning_of_pass_write_index: Some(q),
                            end_of_pass_write_index: Some(q + 1),
                        }),
                    });
                    encode(&mut pass, None, r);
                }
            } else {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("fluid.step"),
                    timestamp_writes: None,
                });
                let mut last = None;
                for r in chunk {
                    encode(&mut pass, last, r);
                    last = Some(r);
                }
            }
            encoders.push(enc);
        }
        if encoders.is_empty() {
            encoders.push(new_encoder());
        }
        let enc = encoders.last_mut().expect("an encoder");
        let mut resolve = Vec::new();
        for (k, set) in query_sets.iter().enumerate() {
            let n = 2 * recorded[k * 2048..].len().min(2048) as u32;
            let size = 8 * u64::from(n);
            let dst = uniform_buffer(
                &self.device,
                "fluid.timestamps.resolve",
                size,
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            );
            let read = uniform_buffer(
                &self.device,
                "fluid.timestamps.read",
                size,
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            );
            enc.resolve_query_set(set, 0..n, &dst, 0);
            enc.copy_buffer_to_buffer(&dst, 0, &read, 0, size);
            resolve.push(read);
        }
        if slots > 0 {
            enc.copy_buffer_to_buffer(&self.results_buf, 0, &self.results_read, 0, 4 * RESULT_SLOTS as u64);
        }
        (encoders, resolve)
    }

    /// Note a submission in flight; when more than [`MAX_IN_FLIGHT`] are, wait for the oldest.
    fn track(&mut self, index: wgpu::SubmissionIndex) -> Result<()> {
        let done = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&done);
        self.queue.on_submitted_work_done(move || flag.store(true, Ordering::Release));
        self.in_flight.push_back((index, done));
        // Steps seen done cost nothing; a step that finds the bound full waits for the oldest.
        // The device has the newer steps queued behind it, so blocking at once costs it nothing.
        while self.in_flight.front().is_some_and(|(_, done)| done.load(Ordering::Acquire)) {
            self.in_flight.pop_front();
        }
        if self.in_flight.len() > MAX_IN_FLIGHT
            && let Some((oldest, _)) = self.in_flight.pop_front()
        {
            poll(&self.device, wgpu::PollType::Wait { submission_index: Some(oldest), timeout: None })?;
        }
        Ok(())
    }

    /// Plan `pi`'s timestamps, read from `resolve`, added to the timings.
    fn collect_timings(&mut self, pi: usize, resolve: &[wgpu::Buffer]) -> Result<()> {
        let period = f64::from(self.queue.get_timestamp_period());
        let mut ticks: Vec<u64> = Vec::new();
        for read in resolve {
            map_read(&self.device, read, self.spin, |m| {
                ticks.extend(
                    m.chunks_exact(8).map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])),
                );
            })?;
        }
        let recorded = &self.plans.get(pi).recorded;
        if let Some(t) = self.timing.as_mut() {
            t.add(recorded.iter().map(|r| &r.kernel.name), &ticks, period);
        }
        Ok(())
    }
}

/// The buffers [`WgpuBackend::ensure_capacity`] grows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Grown {
    Records,
    Params,
}

/// Most invocations one command buffer holds: a plan of more is encoded into several,
/// submitted together. Lavapipe ends a command buffer of about 65 000 dispatches with a
/// segmentation fault, and a solve may ask for 100 000 iterations.
const MAX_PER_BUFFER: usize = 16384;

/// Most plans [`WgpuBackend`] keeps (a step, its diagnostics and the solver's chunks cycle
/// through a few assignments of resources to buffers).
pub(super) const MAX_PLANS: usize = 16;

/// A lowered plan with the bind groups of its invocations.
pub(super) struct Encoded {
    plan: Plan,
    recorded: Vec<Recorded>,
}

/// One dispatch of a run, with its pipeline and bind groups.
struct Recorded {
    kernel: Kernel,
    pipeline: wgpu::ComputePipeline,
    group0: wgpu::BindGroup,
    offset: Option<u32>,
    group1: wgpu::BindGroup,
    workgroups: (u32, u32),
}

/// Encode `r` in a pass whose previous dispatch was `last`: what `last` already set (the
/// pipeline, a bind group) stays bound, so a long solve of one kernel sets little more than
/// its ping-pong group per dispatch.
fn encode(pass: &mut wgpu::ComputePass<'_>, last: Option<&Recorded>, r: &Recorded) {
    let same_pipeline = last.is_some_and(|l| l.pipeline == r.pipeline);
    if !same_pipeline {
        pass.set_pipeline(&r.pipeline);
    }
    if !(same_pipeline && last.is_some_and(|l| l.group0 == r.group0 && l.offset == r.offset)) {
        match r.offset {
            Some(o) => pass.set_bind_group(0, &r.group0, &[o]),
            None => pass.set_bind_group(0, &r.group0, &[]),
        }
    }
    if !(same_pipeline && last.is_some_and(|l| l.group1 == r.group1)) {
        pass.set_bind_group(1, &r.group1, &[]);
    }
    pass.dispatch_workgroups(r.workgroups.0, r.workgroups.1, 1);
}
