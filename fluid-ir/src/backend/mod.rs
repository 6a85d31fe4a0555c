//! The seam between the solver core and the machines that run it: the [`Backend`] trait, what
//! changes from one run to the next ([`StepInputs`]), timings and the shared read-back logic.

use crate::resource::{MemoryReport, ResourceDesc, ResourceId};

mod reads;
pub use crate::bytes::{f32s_le, round_to_half, u32s_le, u32s_to_le_bytes, values_le, values_to_le, words_to_f32};
use crate::error::{Error, Result};
use crate::schedule::Schedule;
use crate::uniforms::StepUniform;
pub use reads::{Gather, PendingRead, ReadHandle, ReadPlan, ReadQueue, check_indices, pick};
use std::time::Duration;

/// Most bytes of a run's [`Records`]: what a GPU backend's buffer for them holds at most
/// (8192 records of 64 bytes: the grid's splats at their limit).
pub const MAX_RECORD_BYTES: usize = 8192 * 64;

/// A run's per-step records in the layout its kernels read (group 0, binding 3 of a kernel
/// whose [`crate::kernel::KernelDesc::records`] is set), packed by the model: the grid's splats, a
/// liquid's pointer. The backend copies the words and tells the kernels how many records
/// there are ([`StepUniform::records`]); what a record means is the model's.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Records {
    count: u32,
    words: Vec<u32>,
}

impl Records {
    /// `records` as their words: `T` is the kernels' record struct (a `#[repr(C)]` Pod type
    /// of whole 32-bit words).
    pub fn of<T: bytemuck::Pod>(records: &[T]) -> Records {
        debug_assert!(size_of::<T>().is_multiple_of(4), "a record is whole words");
        Records { count: records.len() as u32, words: bytemuck::pod_collect_to_vec(records) }
    }

    /// How many records.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Their words, record after record.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// Their bytes.
    pub fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.words)
    }

    /// The records as `T` (what a CPU twin reads); empty when their size is not a whole
    /// number of `T`.
    pub fn as_slice<T: bytemuck::Pod>(&self) -> &[T] {
        bytemuck::try_cast_slice(&self.words).unwrap_or(&[])
    }
}

/// What changes from one run to the next: never part of a [`Schedule`], so GPU backends can
/// record a schedule once and only rewrite this buffer before each submission.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepInputs {
    /// Time step, seconds.
    pub dt: f32,
    /// Simulated time at the start of the step.
    pub time: f32,
    /// Step counter.
    pub step: u32,
    /// The run's records (the model's splats), as its kernels read them.
    pub records: Records,
}

impl StepInputs {
    /// The uniform block.
    pub fn uniform(&self) -> StepUniform {
        StepUniform { dt: self.dt, time: self.time, records: self.records.count(), step: self.step }
    }

    /// The same inputs with `records`.
    pub fn with_records(&self, records: Records) -> StepInputs {
        StepInputs { records, ..self.clone() }
    }

    /// An error unless the records fit a backend's buffer for them ([`MAX_RECORD_BYTES`]).
    /// Every backend checks this before it runs anything.
    pub fn check_records(&self) -> Result<()> {
        let n = self.records.bytes().len();
        if n > MAX_RECORD_BYTES {
            return Err(Error::invalid("records", n, format!("a run's records take at most {MAX_RECORD_BYTES} bytes")));
        }
        Ok(())
    }
}

/// Time spent in one kernel (summed over its invocations in one run).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelTiming {
    /// `fluid.<kernel>`.
    pub label: String,
    /// Invocations measured.
    pub invocations: u32,
    /// Total milliseconds.
    pub ms: f64,
}

/// Per-kernel time accumulated from GPU timestamp pairs ([`add`](Self::add)) or the CPU's clock
/// ([`record`](Self::record)): what every workspace backend's `take_timings` returns. Every
/// reduction pass counts as `reduce` (the GPUs make two per reduction, the CPU one).
#[derive(Clone, Debug, Default)]
pub struct TimestampTimings(std::collections::BTreeMap<&'static str, (u32, f64)>);

impl TimestampTimings {
    /// Add one run: dispatch `k` ran from tick `ticks[2k]` to `ticks[2k + 1]`, a tick lasting
    /// `period_ns` nanoseconds.
    pub fn add<'a>(&mut self, entries: impl IntoIterator<Item = &'a &'static str>, ticks: &[u64], period_ns: f64) {
        for (k, entry) in entries.into_iter().enumerate() {
            let ns = ticks[2 * k + 1].saturating_sub(ticks[2 * k]) as f64 * period_ns;
            self.record(entry, ns * 1e-6);
        }
    }

    /// Add one invocation of the shader entry point (or kernel name) `entry` that took `ms`
    /// milliseconds.
    pub fn record(&mut self, entry: &'static str, ms: f64) {
        let label = if entry.starts_with("reduce") { "reduce" } else { entry };
        let e = self.0.entry(label).or_insert((0, 0.0));
        e.0 += 1;
        e.1 += ms;
    }

    /// The totals, labelled `fluid.<kernel>`, and a fresh start.
    pub fn take(&mut self) -> Vec<KernelTiming> {
        std::mem::take(&mut self.0)
            .into_iter()
            .map(|(k, (invocations, ms))| KernelTiming { label: format!("fluid.{k}"), invocations, ms })
            .collect()
    }
}

/// A machine that holds a model's resources and runs its schedules.
///
/// # Design
///
/// The trait is small on purpose (after burn's `Backend` and cubecl's `ComputeServer`):
/// memory (`allocate` a model's declared [`ResourceDesc`]s, `write` bytes, `read` 32-bit
/// words), execution (`run` a [`Schedule`]), and read-back of reductions. The backend does not
/// know the physics: the order of kernels, their parameters and which resources they touch all
/// come in the schedule. Resources are logical: a [`crate::schedule::Op::Swap`] exchanges the buffers
/// behind two of them, so ping-pong costs no copy. Optional capabilities have default
/// methods that return [`Error::Unsupported`].
///
/// Every backend must give the same values as the CPU backend within the tolerances the
/// conformance suite states per kernel.
///
/// Backends are `Send + Sync`, so a `Simulation` (boxed backend included) can live in a game
/// engine's resources, be built on a loading thread and stepped on a worker. Every method that
/// touches the device takes `&mut self`; the `&self` ones only read names.
pub trait Backend: Send + Sync {
    /// Short name: `cpu`, `wgpu`, `vulkan`.
    fn name(&self) -> &'static str;

    /// The device it runs on (for reports), e.g. `"2 threads"` or an adapter name.
    fn device(&self) -> String;

    /// Hold exactly `resources` from now on, [`ResourceId`]`(i)` naming `resources[i]`: a
    /// resource whose description equals the one held under its id keeps its contents (and
    /// its place in the swaps so far); every other one is made anew, zero-filled; ids past the
    /// list are freed. An empty resource takes no memory. Transient resources
    /// ([`crate::resource::Lifetime::Transient`]) keep nothing and take memory only as their group's
    /// owner ([`crate::resource::owners`]). Fails with [`Error::OutOfMemory`]
    /// when the memory cannot be had (the resources held before stay as they were).
    fn allocate(&mut self, resources: &[ResourceDesc]) -> Result<()>;

    /// The resources held, as last allocated (empty before).
    fn resources(&self) -> &[ResourceDesc];

    /// Bytes this backend holds for a resource like `desc` (what a memory plan counts): its
    /// [`ResourceDesc::bytes`], unless the backend stores its format otherwise.
    fn resource_bytes(&self, desc: &ResourceDesc) -> u64 {
        desc.bytes()
    }

    /// Replace a resource's contents; `bytes` must be its size.
    fn write(&mut self, id: ResourceId, bytes: &[u8]) -> Result<()>;

    /// A resource's contents, as little-endian 32-bit words (an `f32` resource's values,
    /// bit for bit; `f16` storage two to a word).
    fn read(&mut self, id: ResourceId) -> Result<Vec<u32>>;

    /// Replace a float resource's values; `data.len()` must be its number of values. An `f16`
    /// resource stores each rounded to the nearest `f16`.
    fn upload(&mut self, id: ResourceId, data: &[f32]) -> Result<()> {
        let d = desc(self.resources(), id, self.name())?;
        if !d.format.is_half() {
            return self.write(id, bytemuck::cast_slice(data));
        }
        if data.len() as u64 != d.scalars() {
            return Err(Error::FieldLength { field: d.name, expected: d.scalars() as usize, got: data.len() });
        }
        let bytes = values_to_le(d.format, data);
        self.write(id, &bytes)
    }

    /// A float resource's values (an `f16` resource's widened to `f32`).
    fn download(&mut self, id: ResourceId) -> Result<Vec<f32>> {
        let d = desc(self.resources(), id, self.name())?.clone();
        let words = self.read(id)?;
        if d.format.is_half() {
            return Ok(d.values_le(&u32s_to_le_bytes(&words)));
        }
        Ok(words_to_f32(words))
    }

    /// Read back the values of a resource at `indices` (into its flat layout of `f32` values),
    /// in that order: what a model needs for a few bilinear samples,
    /// without the whole field. An index past the resource is an error naming it. By default
    /// the whole resource is read and picked from; GPU backends copy just those values where
    /// they are few.
    fn download_at(&mut self, id: ResourceId, indices: &[usize]) -> Result<Vec<f32>> {
        if indices.is_empty() {
            return Ok(Vec::new());
        }
        let name = desc(self.resources(), id, self.name())?.name;
        pick(name, &self.download(id)?, indices)
    }

    /// [`Backend::download_at`] without waiting: the copy is queued behind every run submitted
    /// so far, so the values are those of the state after them (and of none submitted later),
    /// and the call returns at once. [`Backend::poll_download`] hands the values over once the
    /// device has made them; [`Backend::wait_download`] waits for them. A game asks for this
    /// frame's samples and takes them a frame or two later, and no frame waits for the GPU.
    /// Dropping the [`PendingRead`] lets the backend free what the read holds. By default
    /// (a backend whose runs are done when they return) the values are read at once.
    fn queue_download_at(&mut self, id: ResourceId, indices: &[usize]) -> Result<PendingRead> {
        Ok(PendingRead::ready(self.name(), self.download_at(id, indices)?))
    }

    /// [`Backend::download`] without waiting, as [`Backend::queue_download_at`] does for a few
    /// values: the whole resource as of the runs submitted so far, handed over by
    /// [`Backend::poll_download`] or [`Backend::wait_download`].
    fn queue_download(&mut self, id: ResourceId) -> Result<PendingRead> {
        Ok(PendingRead::ready(self.name(), self.download(id)?))
    }

    /// The values of a queued read once they are there, `None` while the device has not yet
    /// made them; never waits. Each read's values are handed over once: polling it again, or a
    /// read another backend queued, is an error.
    fn poll_download(&mut self, read: &mut PendingRead) -> Result<Option<Vec<f32>>> {
        match read.take_ready(self.name())? {
            Some(values) => Ok(Some(values)),
            None => Err(read.unknown(self.name())),
        }
    }

    /// The values of a queued read, waiting for the device where they are not there yet.
    fn wait_download(&mut self, mut read: PendingRead) -> Result<Vec<f32>> {
        self.poll_download(&mut read)?.ok_or_else(|| read.unknown(self.name()))
    }

    /// Reads queued with [`Backend::queue_download_at`] whose values have not been handed
    /// over yet. One whose [`PendingRead`] was dropped counts until the backend frees it, at
    /// its next queued read or poll once the device is done with it; a count that keeps
    /// growing means reads asked for and never taken. Zero where reads are done at once.
    fn queued_reads(&self) -> usize {
        0
    }

    /// Execute a schedule with this step's inputs. A GPU backend queues the work and returns;
    /// it waits only when three runs are already on the device, so a loop that runs faster
    /// than the device keeps at most three queued.
    fn run(&mut self, schedule: &Schedule, inputs: &StepInputs) -> Result<()>;

    /// The reduction results of the last `run`, by slot (see [`crate::schedule::Op::Reduce`]).
    fn reductions(&mut self) -> Result<Vec<f64>>;

    /// Wait until every submitted run has finished (for timing). Synchronous backends return
    /// at once.
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }

    /// The most memory the backend holds besides `resources` while running `schedules` on
    /// them: its working buffers (uniforms, parameter tables, splats up to
    /// [`MAX_RECORD_BYTES`] of records, reductions, scratch), its own rounding of each buffer,
    /// and, where transfers go through buffers of its own, one whole-resource transfer in
    /// flight. What a model's memory plan adds to the resources, so that
    /// [`Backend::memory`]'s total stays within the two together (reads queued and not yet
    /// taken hold their own buffers on top).
    fn working_memory(&self, resources: &[ResourceDesc], schedules: &[Schedule]) -> u64;

    /// What the backend holds, from its own accounting: each resource's bytes, and everything
    /// it allocated on its device or in memory.
    fn memory(&self) -> Result<MemoryReport> {
        Err(Error::Unsupported { what: "memory accounting".into(), by: self.name().into() })
    }

    /// The device's memory copy bandwidth in GB/s (bytes read + bytes written per second),
    /// measured with a large buffer copy.
    fn copy_bandwidth(&mut self) -> Result<f64> {
        Err(Error::Unsupported { what: "copy bandwidth measurement".into(), by: self.name().into() })
    }

    /// Turn per-kernel timing on or off.
    fn set_timing(&mut self, enabled: bool) -> Result<()> {
        let _ = enabled;
        Err(Error::Unsupported { what: "per-kernel timings".into(), by: self.name().into() })
    }

    /// Per-kernel timings accumulated since timing was enabled (or last taken).
    fn take_timings(&mut self) -> Result<Vec<KernelTiming>> {
        Err(Error::Unsupported { what: "per-kernel timings".into(), by: self.name().into() })
    }

    /// How long this backend's waits for its device poll before they block ([`crate::wait`]):
    /// [`crate::wait::DEFAULT_SPIN`] on a hardware GPU, zero on a CPU device, or what
    /// `FLUID_GPU_SPIN_US` or [`Backend::set_wait_spin`] set. `None` where the backend never
    /// waits for a device (the CPU backend, whose steps are done when `run` returns).
    fn wait_spin(&self) -> Option<Duration> {
        None
    }

    /// Set how long this backend's waits poll before they block (zero: always block); more
    /// than [`crate::wait::MAX_SPIN`] is an error naming the value, and a backend that never
    /// waits for a device answers [`Error::Unsupported`].
    fn set_wait_spin(&mut self, spin: Duration) -> Result<()> {
        let _ = spin;
        Err(Error::Unsupported { what: "a wait spin budget".into(), by: self.name().into() })
    }
}

/// The description of resource `id` among `resources` (a backend's), for a read or write from
/// outside a run, or an error: nothing allocated yet, no such resource, or a transient one
/// (it holds nothing between runs, and its memory is another's).
pub fn desc<'a>(resources: &'a [ResourceDesc], id: ResourceId, backend: &'static str) -> Result<&'a ResourceDesc> {
    if resources.is_empty() {
        return Err(Error::NotAllocated(backend));
    }
    let r = resources
        .get(id.index())
        .ok_or_else(|| Error::invalid("resource", id.0, format!("the backend holds {} resources", resources.len())))?;
    match r.shares() {
        Some(group) => Err(Error::invalid(
            "resource",
            r.name,
            format!("it is transient (it shares memory with group `{group}` and holds nothing between runs)"),
        )),
        None => Ok(r),
    }
}

/// The host memory available now (`MemAvailable` of `/proc/meminfo`), where the system says.
/// Linux overcommits: an allocation larger than memory succeeds and the process is killed
/// later, so what must fit is compared with this first.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

impl<B: Backend + ?Sized> Backend for Box<B> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn device(&self) -> String {
        (**self).device()
    }
    fn allocate(&mut self, resources: &[ResourceDesc]) -> Result<()> {
        (**self).allocate(resources)
    }
    fn resources(&self) -> &[ResourceDesc] {
        (**self).resources()
    }
    fn resource_bytes(&self, desc: &ResourceDesc) -> u64 {
        (**self).resource_bytes(desc)
    }
    fn write(&mut self, id: ResourceId, bytes: &[u8]) -> Result<()> {
        (**self).write(id, bytes)
    }
    fn read(&mut self, id: ResourceId) -> Result<Vec<u32>> {
        (**self).read(id)
    }
    fn upload(&mut self, id: ResourceId, data: &[f32]) -> Result<()> {
        (**self).upload(id, data)
    }
    fn download(&mut self, id: ResourceId) -> Result<Vec<f32>> {
        (**self).download(id)
    }
    fn download_at(&mut self, id: ResourceId, indices: &[usize]) -> Result<Vec<f32>> {
        (**self).download_at(id, indices)
    }
    fn queue_download_at(&mut self, id: ResourceId, indices: &[usize]) -> Result<PendingRead> {
        (**self).queue_download_at(id, indices)
    }
    fn queue_download(&mut self, id: ResourceId) -> Result<PendingRead> {
        (**self).queue_download(id)
    }
    fn poll_download(&mut self, read: &mut PendingRead) -> Result<Option<Vec<f32>>> {
        (**self).poll_download(read)
    }
    fn wait_download(&mut self, read: PendingRead) -> Result<Vec<f32>> {
        (**self).wait_download(read)
    }
    fn queued_reads(&self) -> usize {
        (**self).queued_reads()
    }
    fn run(&mut self, schedule: &Schedule, inputs: &StepInputs) -> Result<()> {
        (**self).run(schedule, inputs)
    }
    fn reductions(&mut self) -> Result<Vec<f64>> {
        (**self).reductions()
    }
    fn finish(&mut self) -> Result<()> {
        (**self).finish()
    }
    fn memory(&self) -> Result<MemoryReport> {
        (**self).memory()
    }
    fn working_memory(&self, resources: &[ResourceDesc], schedules: &[Schedule]) -> u64 {
        (**self).working_memory(resources, schedules)
    }
    fn copy_bandwidth(&mut self) -> Result<f64> {
        (**self).copy_bandwidth()
    }
    fn set_timing(&mut self, enabled: bool) -> Result<()> {
        (**self).set_timing(enabled)
    }
    fn take_timings(&mut self) -> Result<Vec<KernelTiming>> {
        (**self).take_timings()
    }
    fn wait_spin(&self) -> Option<Duration> {
        (**self).wait_spin()
    }
    fn set_wait_spin(&mut self, spin: Duration) -> Result<()> {
        (**self).set_wait_spin(spin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::resource::{Format, Lifetime, Shape};

    /// A backend with only the required methods: resources in memory, runs that do nothing.
    /// Every other answer is the trait's default, what a backend of an integrator's own gets.
    #[derive(Default)]
    struct Memory {
        resources: Vec<ResourceDesc>,
        data: Vec<Vec<u32>>,
    }

    impl Backend for Memory {
        fn name(&self) -> &'static str {
            "memory"
        }
        fn device(&self) -> String {
            "the heap".into()
        }
        fn allocate(&mut self, resources: &[ResourceDesc]) -> Result<()> {
            self.resources = resources.to_vec();
            self.data = resources.iter().map(|r| vec![0; r.words() as usize]).collect();
            Ok(())
        }
        fn resources(&self) -> &[ResourceDesc] {
            &self.resources
        }
        fn working_memory(&self, _: &[ResourceDesc], _: &[Schedule]) -> u64 {
            0
        }
        fn write(&mut self, id: ResourceId, bytes: &[u8]) -> Result<()> {
            desc(&self.resources, id, "memory")?.check_bytes(bytes.len())?;
            self.data[id.index()] =
                bytes.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
            Ok(())
        }
        fn read(&mut self, id: ResourceId) -> Result<Vec<u32>> {
            desc(&self.resources, id, "memory")?;
            Ok(self.data[id.index()].clone())
        }
        fn run(&mut self, _: &Schedule, _: &StepInputs) -> Result<()> {
            Ok(())
        }
        fn reductions(&mut self) -> Result<Vec<f64>> {
            Ok(Vec::new())
        }
    }

    /// What the trait's default methods answer, on `b` (the bare backend, or boxed: a
    /// `Box<dyn Backend>` must answer as what it holds).
    fn defaults_hold(b: &mut dyn Backend) {
        let cells = |name| ResourceDesc::new(name, Shape::Cells, Format::F32, Lifetime::State, 20).on_grid(5, 4);
        let density = ResourceId(1);
        assert!(matches!(b.download(density), Err(Error::NotAllocated("memory"))));
        b.allocate(&[cells("pressure"), cells("density")]).expect("allocate");
        let values: Vec<f32> = (0..20).map(|k| k as f32 * 0.5).collect();
        b.upload(density, &values).expect("upload");
        // Values at indices, in the order asked, repeats kept; none for none; past the end refused.
        assert_eq!(b.download_at(density, &[7, 0, 19, 7]).expect("in range"), vec![3.5, 0.0, 9.5, 3.5]);
        assert_eq!(b.download_at(density, &[]).expect("none"), Vec::<f32>::new());
        let e = b.download_at(density, &[3, 20]).expect_err("index 20").to_string();
        assert!(e.contains("density[20]"), "{e}");
        // Queued reads are ready at once, handed over once, and counted nowhere.
        let mut read = b.queue_download_at(density, &[1, 2]).expect("queue");
        assert_eq!(b.poll_download(&mut read).expect("poll"), Some(vec![0.5, 1.0]));
        assert!(b.poll_download(&mut read).is_err(), "a read handed over twice");
        let whole = b.queue_download(density).expect("queue");
        assert_eq!(b.queued_reads(), 0);
        assert_eq!(b.wait_download(whole).expect("wait"), values);
        assert!(b.finish().is_ok());
        // Optional capabilities are Unsupported, naming the backend.
        for e in [
            b.copy_bandwidth().map(|_| ()).expect_err("bandwidth"),
            b.set_timing(true).expect_err("timing"),
            b.take_timings().map(|_| ()).expect_err("timings"),
            b.set_wait_spin(Duration::from_micros(5)).expect_err("spin"),
        ] {
            assert!(matches!(&e, Error::Unsupported { by, .. } if by == "memory"), "{e}");
        }
        assert_eq!(b.wait_spin(), None);
        assert_eq!((b.name(), b.device().as_str()), ("memory", "the heap"));
    }

    #[test]
    fn the_default_methods_answer_as_documented_and_a_box_as_what_it_holds() {
        defaults_hold(&mut Memory::default());
        let mut boxed: Box<dyn Backend> = Box::new(Memory::default());
        defaults_hold(&mut boxed);
    }
}
