//! Buffers with their memory, freed when dropped.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ash::vk;
use gpu_allocator::MemoryLocation;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use swirly_ir::Result;

use super::context::{Context, Retired};
use crate::{err, vk_err};

/// Device buffers of at least this many bytes get a memory object of their own.
const DEDICATED_BYTES: u64 = 1 << 20;

/// Where a buffer's memory lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Location {
    /// Device memory, for kernels.
    Device,
    /// Host-visible memory the host writes and the device reads (mapped).
    Upload,
    /// Host-visible memory the device writes and the host reads (mapped).
    Readback,
}

/// A buffer and its memory.
pub(crate) struct Buffer {
    ctx: Arc<Context>,
    pub(super) handle: vk::Buffer,
    alloc: Option<Allocation>,
    size: u64,
    pub(super) usage: vk::BufferUsageFlags,
    /// The latest submission that uses it (0: none).
    pub(super) last_use: AtomicU64,
    /// Held while the host touches its mapped memory.
    mapped: Mutex<()>,
}

impl Buffer {
    /// A buffer of `size` bytes (at least 16) with memory bound; `shared`: used by the queue
    /// families the context shares field buffers with too.
    pub(crate) fn new(
        ctx: &Arc<Context>,
        name: &str,
        size: u64,
        usage: vk::BufferUsageFlags,
        location: Location,
        shared: bool,
    ) -> Result<Buffer> {
        let size = size.max(16);
        let mut info = vk::BufferCreateInfo::default().size(size).usage(usage);
        if shared && !ctx.share.is_empty() {
            info = info.sharing_mode(vk::SharingMode::CONCURRENT).queue_family_indices(&ctx.share);
        }
        // SAFETY: the device is live; the create info is valid.
        let handle = unsafe { ctx.device.create_buffer(&info, None) }.map_err(|e| vk_err("vkCreateBuffer", e))?;
        let mut buffer = Buffer {
            ctx: ctx.clone(),
            handle,
            alloc: None,
            size,
            usage,
            last_use: AtomicU64::new(0),
            mapped: Mutex::new(()),
        };
        // SAFETY: `handle` was just created from this device.
        let requirements = unsafe { ctx.device.get_buffer_memory_requirements(handle) };
        let location = match location {
            Location::Device => MemoryLocation::GpuOnly,
            Location::Upload => MemoryLocation::CpuToGpu,
            Location::Readback => MemoryLocation::GpuToCpu,
        };
        let desc = AllocationCreateDesc {
            name,
            requirements,
            location,
            linear: true,
            // A large device buffer gets a memory object of its own, placed by the driver: the
            // same fields sub-allocated at offsets within one block ran some kernels 5-10 %
            // slower (doc/PERFORMANCE.md).
            allocation_scheme: if location == MemoryLocation::GpuOnly && size >= DEDICATED_BYTES {
                AllocationScheme::DedicatedBuffer(handle)
            } else {
                AllocationScheme::GpuAllocatorManaged
            },
        };
        let allocated = match ctx.allocator().as_mut() {
            Some(a) => {
                let made = a.allocate(&desc);
                // Retired buffers stay allocated until the device is done with them.
                ctx.note_peak(a.generate_report().total_allocated_bytes);
                made
            }
            None => return Err(err("the allocator is gone")),
        };
        let alloc = allocated.map_err(|e| match e {
            gpu_allocator::AllocationError::OutOfMemory => {
                err(format!("out of device memory for `{name}` ({size} bytes)"))
            }
            e => err(format!("allocating `{name}` ({size} bytes): {e}")),
        })?;
        // SAFETY: the allocation satisfies this buffer's requirements, is bound to nothing
        // else at its range, and is freed only with the buffer (`Drop`).
        let bound = unsafe { ctx.device.bind_buffer_memory(handle, alloc.memory(), alloc.offset()) };
        buffer.alloc = Some(alloc);
        bound.map_err(|e| vk_err("vkBindBufferMemory", e))?;
        Ok(buffer)
    }

    pub(super) fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// Its bytes (at least 16).
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// The handle, for an application that draws from it.
    pub(crate) fn handle(&self) -> vk::Buffer {
        self.handle
    }

    /// Bytes of memory it holds.
    pub(crate) fn allocated(&self) -> u64 {
        self.alloc.as_ref().map_or(0, Allocation::size)
    }

    /// Its mapped memory, while no pending submission uses it.
    fn mapped(&self, len: usize) -> Result<*mut u8> {
        let last = self.last_use.load(Ordering::Acquire);
        if !self.ctx.is_complete(last) {
            return Err(err("a buffer's memory was touched while the GPU may use it"));
        }
        if len as u64 > self.size {
            return Err(err(format!("{len} bytes asked of a buffer of {}", self.size)));
        }
        match self.alloc.as_ref().and_then(Allocation::mapped_ptr) {
            Some(p) => Ok(p.as_ptr().cast::<u8>()),
            None => Err(err("the buffer is not host-visible")),
        }
    }

    /// Copy `bytes` to the start of its mapped memory.
    pub(crate) fn write(&self, offset: usize, bytes: &[u8]) -> Result<()> {
        let _held = self.mapped.lock().unwrap_or_else(|e| e.into_inner());
        let p = self.mapped(offset + bytes.len())?;
        // SAFETY: the mapping covers `offset + bytes.len()` bytes (checked), no submission that
        // uses the buffer is pending, and the host holds the buffer's mapping lock.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.add(offset), bytes.len()) };
        Ok(())
    }

    /// `f` of the first `len` bytes of its mapped memory.
    pub(crate) fn read<T>(&self, len: usize, f: impl FnOnce(&[u8]) -> T) -> Result<T> {
        let _held = self.mapped.lock().unwrap_or_else(|e| e.into_inner());
        let p = self.mapped(len)?;
        // SAFETY: as in `write`: in bounds, not in use by the device, the lock held.
        Ok(f(unsafe { std::slice::from_raw_parts(p, len) }))
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let tag = *self.last_use.get_mut();
        self.ctx.retire(tag, Retired::Buffer(self.handle, self.alloc.take().map(Box::new)));
    }
}
