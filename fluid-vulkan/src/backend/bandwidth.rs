//! The device's copy bandwidth, as `fluid bench` reports it.

use std::sync::Arc;

use ash::vk;
use swirly_ir::Result;

use super::VulkanBackend;
use crate::raw::{
    self, Buffer, CommandBuffer, DescriptorPool, DescriptorSet, Fence, Location, Pipeline, PoolKind, SetLayout,
};

impl VulkanBackend {
    /// GB/s of 20 alternating compute copies between two buffers of up to 1 GiB (the same
    /// 16-bytes-per-invocation kernel as the wgpu backend), best of three submissions.
    pub(super) fn bandwidth(&mut self) -> Result<f64> {
        let bytes = (1u64 << 30).min(self.max_binding / 16 * 16);
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let make = |name| -> Result<Arc<Buffer>> {
            Ok(Arc::new(Buffer::new(&self.ctx, name, bytes, usage, Location::Device, false)?))
        };
        let (a, b) = (make("fluid.bandwidth.a")?, make("fluid.bandwidth.b")?);
        let storage = vk::DescriptorType::STORAGE_BUFFER;
        let layout = SetLayout::new(&self.ctx, vec![(0, storage), (1, storage)])?;
        let pipeline = Pipeline::new(&self.ctx, "bandwidth", vec![layout.clone()])?;
        let pool = DescriptorPool::new(&self.ctx, 2, &[vk::DescriptorPoolSize { ty: storage, descriptor_count: 4 }])?;
        let sets = [
            DescriptorSet::new(&pool, &layout, &[(0, &a, bytes), (1, &b, bytes)])?,
            DescriptorSet::new(&pool, &layout, &[(0, &b, bytes), (1, &a, bytes)])?,
        ];
        let invocations = bytes / 16;
        let wg = invocations.div_ceil(256);
        let (gx, gy) = if wg <= 65535 { (wg as u32, 1) } else { (65535u32, wg.div_ceil(65535) as u32) };
        let copies = 20u32;
        let mut cb = CommandBuffer::new(&self.ctx, PoolKind::Once)?;
        let mut r = cb.begin(vk::CommandBufferUsageFlags::empty())?;
        r.bind_pipeline(&pipeline)?;
        for k in 0..copies {
            if k > 0 {
                r.barrier(
                    (vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::SHADER_WRITE),
                    (
                        vk::PipelineStageFlags::COMPUTE_SHADER,
                        vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
                    ),
                );
            }
            r.bind_sets(&[&sets[(k % 2) as usize]], &[])?;
            r.dispatch([gx, gy, 1])?;
        }
        r.end()?;
        let fence = Fence::new(&self.ctx)?;
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let t0 = std::time::Instant::now();
            raw::submit(&self.ctx, "bandwidth", &[&cb], &fence)?;
            fence.wait(self.spin, "bandwidth")?;
            best = best.min(t0.elapsed().as_secs_f64());
        }
        Ok(2.0 * bytes as f64 * f64::from(copies) / best / 1e9)
    }
}
