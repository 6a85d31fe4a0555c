//! Compute pipelines and what they bind: descriptor set layouts, pools and sets, and timestamp
//! query pools.

use std::ffi::CString;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ash::vk;
use swirly_ir::Result;

use super::buffer::Buffer;
use super::context::{Context, Retired};
use crate::{err, setup_lock, spirv, vk_err};

/// A descriptor set layout: its bindings, (binding, type), one descriptor each, for compute.
pub(crate) struct SetLayout {
    ctx: Arc<Context>,
    pub(super) handle: vk::DescriptorSetLayout,
    pub(super) bindings: Vec<(u32, vk::DescriptorType)>,
}

impl SetLayout {
    pub(crate) fn new(ctx: &Arc<Context>, bindings: Vec<(u32, vk::DescriptorType)>) -> Result<Arc<SetLayout>> {
        let vk_bindings: Vec<vk::DescriptorSetLayoutBinding<'_>> = bindings
            .iter()
            .map(|&(i, t)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i)
                    .descriptor_type(t)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&vk_bindings);
        // SAFETY: the device is live; `info` points to `vk_bindings`, valid for the call.
        let handle = unsafe { ctx.device.create_descriptor_set_layout(&info, None) }
            .map_err(|e| vk_err("vkCreateDescriptorSetLayout", e))?;
        Ok(Arc::new(SetLayout { ctx: ctx.clone(), handle, bindings }))
    }

    /// How many of its bindings take a dynamic offset.
    pub(super) fn dynamic_count(&self) -> usize {
        self.bindings.iter().filter(|b| b.1 == vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC).count()
    }
}

impl Drop for SetLayout {
    fn drop(&mut self) {
        self.ctx.retire(self.ctx.latest(), Retired::SetLayout(self.handle));
    }
}

/// A compute pipeline of one embedded SPIR-V module and its layout.
pub(crate) struct Pipeline {
    ctx: Arc<Context>,
    pub(super) handle: vk::Pipeline,
    layout: vk::PipelineLayout,
    pub(super) sets: Vec<Arc<SetLayout>>,
}

impl Pipeline {
    /// The pipeline of the embedded module `entry` (its entry point of that name) over `sets`.
    pub(crate) fn new(ctx: &Arc<Context>, entry: &str, sets: Vec<Arc<SetLayout>>) -> Result<Arc<Pipeline>> {
        let words = spirv::words(entry).ok_or_else(|| err(format!("no SPIR-V module {entry}")))?;
        Pipeline::with_words(ctx, entry, &words, sets)
    }

    /// The pipeline of SPIR-V module `words` (its entry point `entry`) over `sets`: a module
    /// naga made from our WGSL, as `cargo xtask shaders` does.
    pub(crate) fn with_words(
        ctx: &Arc<Context>,
        entry: &str,
        words: &[u32],
        sets: Vec<Arc<SetLayout>>,
    ) -> Result<Arc<Pipeline>> {
        let _setup = setup_lock();
        let name = CString::new(entry).map_err(|_| err("entry name with a NUL byte"))?;
        let handles: Vec<vk::DescriptorSetLayout> = sets.iter().map(|s| s.handle).collect();
        let info = vk::PipelineLayoutCreateInfo::default().set_layouts(&handles);
        // SAFETY: the set layouts are this device's and alive.
        let layout = unsafe { ctx.device.create_pipeline_layout(&info, None) }
            .map_err(|e| vk_err("vkCreatePipelineLayout", e))?;
        let mut pipeline = Pipeline { ctx: ctx.clone(), handle: vk::Pipeline::null(), layout, sets };
        let info = vk::ShaderModuleCreateInfo::default().code(words);
        // SAFETY: `words` is a complete SPIR-V module naga generated from our WGSL (committed by
        // `cargo xtask shaders` and validated by spirv-val, or an f16 variant made at run time
        // by the same writer), whose interface matches the layouts (tested by naga reflection
        // of the same descriptors).
        let module = unsafe { ctx.device.create_shader_module(&info, None) }
            .map_err(|e| vk_err(&format!("vkCreateShaderModule {entry}"), e))?;
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(&name);
        let info = vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout);
        // SAFETY: module, layout and entry name are valid for the call.
        let created = unsafe {
            ctx.device.create_compute_pipelines(vk::PipelineCache::null(), std::slice::from_ref(&info), None)
        };
        // SAFETY: a module may be destroyed once its pipelines are created.
        unsafe { ctx.device.destroy_shader_module(module, None) };
        pipeline.handle = created.map_err(|(_, e)| vk_err(&format!("vkCreateComputePipelines {entry}"), e))?[0];
        Ok(Arc::new(pipeline))
    }

    pub(super) fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    pub(super) fn layout(&self) -> vk::PipelineLayout {
        self.layout
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        self.ctx.retire(self.ctx.latest(), Retired::Pipeline(self.handle, self.layout));
    }
}

/// A descriptor pool; its sets keep it alive.
pub(crate) struct DescriptorPool {
    ctx: Arc<Context>,
    handle: vk::DescriptorPool,
    /// Held while a set is allocated from it (Vulkan wants pools externally synchronised).
    allocating: Mutex<()>,
}

impl DescriptorPool {
    pub(crate) fn new(ctx: &Arc<Context>, max_sets: u32, sizes: &[vk::DescriptorPoolSize]) -> Result<Arc<Self>> {
        let info = vk::DescriptorPoolCreateInfo::default().max_sets(max_sets).pool_sizes(sizes);
        // SAFETY: the device is live; `info` points to `sizes`, valid for the call.
        let handle = unsafe { ctx.device.create_descriptor_pool(&info, None) }
            .map_err(|e| vk_err("vkCreateDescriptorPool", e))?;
        Ok(Arc::new(DescriptorPool { ctx: ctx.clone(), handle, allocating: Mutex::new(()) }))
    }
}

impl Drop for DescriptorPool {
    fn drop(&mut self) {
        self.ctx.retire(self.ctx.latest(), Retired::DescriptorPool(self.handle));
    }
}

/// A descriptor set, written once when made: every binding of its layout names a buffer,
/// which the set keeps alive.
pub(crate) struct DescriptorSet {
    _pool: Arc<DescriptorPool>,
    pub(super) handle: vk::DescriptorSet,
    pub(super) layout: Arc<SetLayout>,
    pub(super) buffers: Vec<Arc<Buffer>>,
    /// (range, buffer size) of each dynamic binding, in binding order.
    pub(super) dynamic: Vec<(u64, u64)>,
}

impl DescriptorSet {
    /// A set of `layout` from `pool` whose binding `b` views the first `range` bytes of
    /// `buffer`, for each `(b, buffer, range)` of `writes`; every binding of the layout must be
    /// written once, with a buffer of the usage its type needs.
    pub(crate) fn new(
        pool: &Arc<DescriptorPool>,
        layout: &Arc<SetLayout>,
        writes: &[(u32, &Arc<Buffer>, u64)],
    ) -> Result<Arc<DescriptorSet>> {
        let ctx = &pool.ctx;
        if !Arc::ptr_eq(ctx, &layout.ctx) {
            return Err(err("a descriptor set of another device's layout"));
        }
        let mut infos = Vec::with_capacity(writes.len());
        let mut dynamic = Vec::new();
        for &(binding, ty) in &layout.bindings {
            let mut of = writes.iter().filter(|w| w.0 == binding);
            let (Some(&(_, buffer, range)), None) = (of.next(), of.next()) else {
                return Err(err(format!("descriptor binding {binding} written other than once")));
            };
            let usage = match ty {
                vk::DescriptorType::UNIFORM_BUFFER | vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC => {
                    vk::BufferUsageFlags::UNIFORM_BUFFER
                }
                _ => vk::BufferUsageFlags::STORAGE_BUFFER,
            };
            if !buffer.usage.contains(usage) || range > buffer.size() || !Arc::ptr_eq(ctx, buffer.context()) {
                return Err(err(format!("descriptor binding {binding}: a buffer it cannot view")));
            }
            if ty == vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC {
                dynamic.push((range, buffer.size()));
            }
            infos.push((binding, ty, vk::DescriptorBufferInfo { buffer: buffer.handle, offset: 0, range }));
        }
        if writes.len() != infos.len() {
            return Err(err("a descriptor write for a binding the layout does not have"));
        }
        let layouts = [layout.handle];
        let info = vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool.handle).set_layouts(&layouts);
        let held = pool.allocating.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: pool and layout are this device's and alive; the pool's lock is held.
        let handle = unsafe { ctx.device.allocate_descriptor_sets(&info) }
            .map_err(|e| vk_err("vkAllocateDescriptorSets", e))?[0];
        drop(held);
        let vk_writes: Vec<vk::WriteDescriptorSet<'_>> = infos
            .iter()
            .map(|(binding, ty, info)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(handle)
                    .dst_binding(*binding)
                    .descriptor_type(*ty)
                    .buffer_info(std::slice::from_ref(info))
            })
            .collect();
        // SAFETY: the set is new (no command uses it); each write names a binding of its layout
        // with its type and a live buffer of the usage it needs, inside the buffer.
        unsafe { ctx.device.update_descriptor_sets(&vk_writes, &[]) };
        Ok(Arc::new(DescriptorSet {
            _pool: pool.clone(),
            handle,
            layout: layout.clone(),
            buffers: writes.iter().map(|w| w.1.clone()).collect(),
            dynamic,
        }))
    }
}

/// Timestamp queries.
pub(crate) struct QueryPool {
    ctx: Arc<Context>,
    pub(super) handle: vk::QueryPool,
    pub(super) count: u32,
    /// The latest submission that writes them (0: none).
    pub(super) last_use: AtomicU64,
}

impl QueryPool {
    pub(crate) fn timestamps(ctx: &Arc<Context>, count: u32) -> Result<Arc<QueryPool>> {
        let info = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(count.max(1));
        // SAFETY: the device is live; the create info is valid.
        let handle =
            unsafe { ctx.device.create_query_pool(&info, None) }.map_err(|e| vk_err("vkCreateQueryPool", e))?;
        Ok(Arc::new(QueryPool { ctx: ctx.clone(), handle, count, last_use: AtomicU64::new(0) }))
    }

    /// Every query's ticks, once the submission that wrote them is done.
    pub(crate) fn results(&self) -> Result<Vec<u64>> {
        let last = self.last_use.load(Ordering::Acquire);
        if last == 0 || !self.ctx.is_complete(last) {
            return Err(err("timestamps read before the run that writes them finished"));
        }
        let mut ticks = vec![0u64; self.count as usize];
        // SAFETY: the submission that reset and wrote every query is done; the range is the pool's.
        unsafe {
            self.ctx.device.get_query_pool_results(
                self.handle,
                0,
                &mut ticks,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
        }
        .map_err(|e| vk_err("vkGetQueryPoolResults", e))?;
        Ok(ticks)
    }
}

impl Drop for QueryPool {
    fn drop(&mut self) {
        let tag = *self.last_use.get_mut();
        self.ctx.retire(tag, Retired::QueryPool(self.handle));
    }
}
