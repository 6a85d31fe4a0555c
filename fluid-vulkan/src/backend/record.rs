//! Recording a schedule's plan into a command buffer that each run replays.

use std::collections::HashMap;
use std::sync::Arc;

use ash::vk;
use swirly_ir::lower::{Buffer as Bound, Invocation, Plan, Target, lower};
use swirly_ir::schedule::RESULT_SLOTS;
use swirly_ir::{Kernel, Result, Schedule};
use swirly_shaders::HalfStorage;

use super::{PARAMS_BINDING, VulkanBackend, WORKGROUP};
use crate::raw::{
    Buffer, CommandBuffer, Context, DescriptorPool, DescriptorSet, Location, Pipeline, PoolKind, QueryPool, SetLayout,
};
use crate::{err, spirv};

/// Most invocations one command buffer records: a schedule of more is recorded into several,
/// submitted together. Lavapipe ends a command buffer of about 65 000 dispatches with a
/// segmentation fault in its executor, and a solve may ask for 100 000 iterations.
pub(super) const MAX_PER_BUFFER: usize = 16384;

/// A kernel's pipeline and the layouts of its two descriptor sets.
pub(super) struct KernelPipeline {
    pub(super) kernel: Kernel,
    pub(super) pipeline: Arc<Pipeline>,
    pub(super) sets: [Arc<SetLayout>; 2],
}

/// A schedule's plan recorded into a command buffer (which keeps its descriptor sets,
/// parameter buffer and pipelines alive).
pub(super) struct Recording {
    pub(super) plan: Plan,
    /// The command buffers, in order, each of at most [`MAX_PER_BUFFER`] invocations.
    pub(super) cbs: Vec<CommandBuffer>,
    /// Timestamp queries: the pool and the entry of each (begin, end) pair.
    pub(super) queries: Option<(Arc<QueryPool>, Vec<&'static str>)>,
}

/// The bindings of a kernel's two descriptor set layouts, (binding, type): group 0 holds the
/// model uniform and the step uniform, the parameter block at a dynamic offset where the
/// kernel has one, and the splats where it reads them; group 1 one storage buffer per slot.
pub(super) fn set_bindings(kernel: Kernel) -> [Vec<(u32, vk::DescriptorType)>; 2] {
    let mut g0 = vec![(0, vk::DescriptorType::UNIFORM_BUFFER), (1, vk::DescriptorType::UNIFORM_BUFFER)];
    if kernel.params.is_some() {
        g0.push((2, vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC));
    }
    if kernel.records {
        g0.push((3, vk::DescriptorType::STORAGE_BUFFER));
    }
    let g1 = (0..kernel.bindings.len() as u32).map(|i| (i, vk::DescriptorType::STORAGE_BUFFER)).collect();
    [g0, g1]
}

/// `kernel`'s pipeline over the layouts of its two sets, from its committed SPIR-V.
pub(super) fn kernel_pipeline(ctx: &Arc<Context>, kernel: Kernel) -> Result<KernelPipeline> {
    if spirv::words(kernel.name).is_none() {
        return Err(err(format!("no SPIR-V for {} (run `cargo xtask shaders`)", kernel.name)));
    }
    let [g0, g1] = set_bindings(kernel);
    let sets = [SetLayout::new(ctx, g0)?, SetLayout::new(ctx, g1)?];
    let pipeline = Pipeline::new(ctx, kernel.name, sets.to_vec())?;
    Ok(KernelPipeline { kernel, pipeline, sets })
}

/// Set 0 of each kernel, and set 1 of each (kernel, buffers), numbered in order of first use.
pub(super) type Sets = (HashMap<&'static str, usize>, HashMap<(&'static str, Vec<Bound>), usize>);

/// The descriptor sets a recording of `plan` binds.
pub(super) fn distinct_sets(plan: &[Invocation]) -> Sets {
    let mut set0_of: HashMap<&'static str, usize> = HashMap::new();
    let mut set1_of: HashMap<(&'static str, Vec<Bound>), usize> = HashMap::new();
    for s in plan {
        let n0 = set0_of.len();
        set0_of.entry(s.kernel.name).or_insert(n0);
        let n1 = set1_of.len();
        set1_of.entry((s.kernel.name, s.buffers.clone())).or_insert(n1);
    }
    (set0_of, set1_of)
}

/// The descriptor pool of a recording that allocates these sets: (most sets, sizes per type).
/// Each set 0 is counted with every binding group 0 may hold; `storage_of(kernel)` gives a
/// kernel's storage slots. Counts are at least 1: Vulkan refuses empty pools (an empty schedule
/// records none).
pub(super) fn pool_sizes(
    (set0_of, set1_of): &Sets,
    storage_of: impl Fn(&str) -> usize,
) -> (u32, [vk::DescriptorPoolSize; 3]) {
    let storage_count: usize = set1_of.keys().map(|(e, p)| p.len().max(storage_of(e))).sum();
    let size = |ty, n: usize| vk::DescriptorPoolSize { ty, descriptor_count: (n as u32).max(1) };
    let sizes = [
        size(vk::DescriptorType::UNIFORM_BUFFER, 2 * set0_of.len()),
        size(vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC, set0_of.len()),
        size(vk::DescriptorType::STORAGE_BUFFER, storage_count + set0_of.len()),
    ];
    (((set0_of.len() + set1_of.len()) as u32).max(1), sizes)
}

/// `words` without its `StorageInputOutput16` capability: naga declares it with any `f16`,
/// and compute kernels have no 16-bit inputs or outputs to need it.
fn without_io16(words: &mut Vec<u32>) {
    const OP_CAPABILITY: u32 = 2 << 16 | 17;
    const STORAGE_INPUT_OUTPUT_16: u32 = 4436;
    let mut k = 5;
    while k + 1 < words.len() {
        let count = (words[k] >> 16).max(1) as usize;
        if words[k] == OP_CAPABILITY && words[k + 1] == STORAGE_INPUT_OUTPUT_16 {
            words.drain(k..k + 2);
            return;
        }
        k += count;
    }
}

impl VulkanBackend {
    /// The pipeline of `kernel` with the binding slots of `half` (a bit each) in f16 storage:
    /// the kernel's own for none, else a variant compiled from its WGSL at first use, held the
    /// backend's [`HalfStorage`] way.
    fn pipeline(&self, kernel: Kernel, half: u32) -> Result<Arc<Pipeline>> {
        let own = &self.kernels[kernel.name];
        if half == 0 {
            return Ok(own.pipeline.clone());
        }
        let mut variants = self.variants.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = variants.get(&(kernel.name, half)) {
            return Ok(p.clone());
        }
        let storage = self.half_storage;
        let src = swirly_shaders::source(kernel.module)
            .and_then(|s| swirly_shaders::half_variant(&s, half, storage))
            .ok_or_else(|| err(format!("no f16 variant of {} for slots {half:#b}", kernel.module)))?;
        let modules = swirly_shaders::spirv::compile(kernel.module, &src).map_err(err)?;
        let mut words = (modules.into_iter().find(|(entry, _)| entry == kernel.name))
            .ok_or_else(|| err(format!("no entry {} in its f16 variant", kernel.name)))?
            .1;
        if storage == HalfStorage::Native && self.ctx.half() != Some(true) {
            without_io16(&mut words);
        }
        let pipeline = Pipeline::with_words(&self.ctx, kernel.name, &words, own.sets.to_vec())?;
        variants.insert((kernel.name, half), pipeline.clone());
        Ok(pipeline)
    }

    /// Make the pipelines `schedule` runs that are not made yet (the reductions' too): a
    /// backend builds only the kernels its schedules use.
    pub(super) fn ensure_pipelines(&mut self, schedule: &Schedule) -> Result<()> {
        let reduces = schedule.ops().iter().any(|op| matches!(op, swirly_ir::Op::Reduce { .. }));
        let kernels =
            schedule.dispatches().map(|d| d.kernel).chain(reduces.then_some(swirly_ir::KERNELS).into_iter().flatten());
        for kernel in kernels {
            if !self.kernels.contains_key(kernel.name) {
                let made = kernel_pipeline(&self.ctx, kernel)?;
                self.kernels.insert(kernel.name, made);
            }
        }
        Ok(())
    }

    /// Record `schedule` from the current assignment of resources to buffers (its pipelines
    /// made: [`VulkanBackend::ensure_pipelines`]).
    pub(super) fn record(&self, schedule: &Schedule, timed: bool) -> Result<Recording> {
        let target = Target { param_align: self.align as u32, workgroup: WORKGROUP };
        let plan = lower(schedule, &self.res.descs, &self.res.map, &target)?;
        let usage = vk::BufferUsageFlags::UNIFORM_BUFFER;
        let params =
            Arc::new(Buffer::new(&self.ctx, "fluid.params", plan.params.len() as u64, usage, Location::Upload, false)?);
        params.write(0, &plan.params)?;
        let sets = distinct_sets(&plan.invocations);
        let (max_sets, sizes) = pool_sizes(&sets, |e| self.kernels[e].kernel.bindings.len());
        let pool = DescriptorPool::new(&self.ctx, max_sets, &sizes)?;
        let buffer_of = |b: Bound| match b {
            Bound::Partials => &self.partials,
            Bound::Results => &self.results,
            Bound::Physical(k) => &self.res.buffers[k],
        };
        // Set 0 per kernel, set 1 per (kernel, buffers).
        let mut set0: HashMap<&'static str, Arc<DescriptorSet>> = HashMap::new();
        for name in sets.0.keys() {
            let k = &self.kernels[name];
            let mut writes =
                vec![(0, &self.uniform_buf, swirly_ir::schedule::UNIFORM_BYTES as u64), (1, &self.step_buf, 16)];
            if k.kernel.params.is_some() {
                writes.push((2, &params, PARAMS_BINDING));
            }
            if k.kernel.records {
                writes.push((3, &self.record_buf, self.record_buf.size()));
            }
            set0.insert(name, DescriptorSet::new(&pool, &k.sets[0], &writes)?);
        }
        let mut set1: HashMap<(&'static str, Vec<Bound>), Arc<DescriptorSet>> = HashMap::new();
        for (name, buffers) in sets.1.keys() {
            let writes: Vec<(u32, &Arc<Buffer>, u64)> = buffers
                .iter()
                .enumerate()
                .map(|(b, p)| {
                    let buffer = buffer_of(*p);
                    (b as u32, buffer, buffer.size())
                })
                .collect();
            let set = DescriptorSet::new(&pool, &self.kernels[name].sets[1], &writes)?;
            set1.insert((name, buffers.clone()), set);
        }

        let invocations = &plan.invocations;
        let queries = if timed {
            let pool = QueryPool::timestamps(&self.ctx, 2 * invocations.len() as u32)?;
            Some((pool, invocations.iter().map(|s| s.kernel.name).collect()))
        } else {
            None
        };
        // An empty schedule records one empty command buffer.
        let chunks: Vec<&[Invocation]> =
            if invocations.is_empty() { vec![&[]] } else { invocations.chunks(MAX_PER_BUFFER).collect() };
        let last = chunks.len() - 1;
        let mut cbs = Vec::with_capacity(chunks.len());
        for (c, chunk) in chunks.into_iter().enumerate() {
            let mut cb = CommandBuffer::new(&self.ctx, PoolKind::Once)?;
            let mut r = cb.begin(vk::CommandBufferUsageFlags::SIMULTANEOUS_USE)?;
            if let (0, Some((pool, _))) = (c, &queries) {
                r.reset_queries(pool);
            }
            for (j, Invocation { kernel, buffers, workgroups, params: offset, barrier, half }) in
                chunk.iter().enumerate()
            {
                let k = c * MAX_PER_BUFFER + j;
                if *barrier {
                    r.barrier(
                        (vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::SHADER_WRITE),
                        (
                            vk::PipelineStageFlags::COMPUTE_SHADER,
                            vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
                        ),
                    );
                }
                if let Some((pool, _)) = &queries {
                    r.timestamp(pool, 2 * k as u32)?;
                }
                r.bind_pipeline(&self.pipeline(*kernel, *half)?)?;
                let sets = [&set0[kernel.name], &set1[&(kernel.name, buffers.clone())]];
                let dynamic: Vec<u32> = offset.iter().copied().collect();
                r.bind_sets(&sets, &dynamic)?;
                r.dispatch([workgroups.0, workgroups.1, 1])?;
                if let Some((pool, _)) = &queries {
                    r.timestamp(pool, 2 * k as u32 + 1)?;
                }
            }
            if c == last && plan.reduction_slots > 0 {
                r.barrier(
                    (vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::SHADER_WRITE),
                    (vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_READ),
                );
                let region = [vk::BufferCopy { src_offset: 0, dst_offset: 0, size: 4 * RESULT_SLOTS as u64 }];
                r.copy(&self.results, &self.results_read, &region)?;
                r.barrier(
                    (vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_WRITE),
                    (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ),
                );
            }
            r.end()?;
            cbs.push(cb);
        }
        Ok(Recording { plan, cbs, queries })
    }
}
