//! The seam between the solver core and the machines that run it.

use crate::grid::{Boundary, FieldId, Grid};
use crate::schedule::Schedule;
use crate::splat::Splat;
use crate::uniforms::{GridUniform, SplatGpu, StepUniform};
use crate::{Error, Result};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// What changes from one step to the next: never part of a [`Schedule`], so GPU backends can
/// record a schedule once and only rewrite this buffer before each submission.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepInputs {
    /// Time step, seconds.
    pub dt: f32,
    /// Simulated time at the start of the step.
    pub time: f32,
    /// Step counter.
    pub step: u32,
    /// Splats applied by the `splat` kernel this step (user splats and scene emitters).
    pub splats: Vec<Splat>,
}

impl StepInputs {
    /// The uniform block.
    pub fn uniform(&self) -> StepUniform {
        StepUniform { dt: self.dt, time: self.time, splat_count: self.splats.len() as u32, step: self.step }
    }

    /// The splats in the kernels' layout for `grid`. On a periodic axis a centre past the box
    /// moves into it by whole box lengths (the kernels measure the minimum image from a centre
    /// inside the box); a centre inside stays as it is, bit for bit.
    pub fn gpu_splats(&self, grid: &GridUniform) -> Vec<SplatGpu> {
        let periodic = Boundary::Periodic.code();
        let lengths = [
            (grid.boundary_x == periodic).then_some(grid.nx as f32 * grid.h),
            (grid.boundary_y == periodic).then_some(grid.ny as f32 * grid.h),
        ];
        self.splats
            .iter()
            .map(|s| {
                let mut gpu = s.to_gpu();
                for (c, len) in gpu.center.iter_mut().zip(lengths) {
                    if let Some(len) = len
                        && !(0.0..len).contains(c)
                    {
                        // rem_euclid can round up to `len` itself, which the kernels also handle.
                        *c = c.rem_euclid(len);
                    }
                }
                gpu
            })
            .collect()
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

/// A machine that stores the fields and runs schedules.
///
/// # Design
///
/// The trait is small on purpose (after burn's `Backend`): memory (`allocate`, `upload`,
/// `download`), execution (`run`), and read-back of reductions. The backend does not know the
/// physics: the order of kernels, their parameters and which buffers they touch all come in
/// the [`Schedule`]. Field names are logical: a [`crate::Op::Swap`] exchanges the buffers
/// behind two names, so ping-pong costs no copy. Optional capabilities have default methods
/// that return [`Error::Unsupported`].
///
/// Every backend must give the same fields as the CPU backend within the tolerances the
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

    /// Allocate every field of [`FieldId::STATE_AND_SCRATCH`] for `grid`, zero-filled.
    /// Fails with [`Error::OutOfMemory`] when the memory cannot be had.
    fn allocate(&mut self, grid: &Grid) -> Result<()>;

    /// Replace a field's contents; `data.len()` must equal `grid.len(field)`.
    fn upload(&mut self, field: FieldId, data: &[f32]) -> Result<()>;

    /// Read a field back.
    fn download(&mut self, field: FieldId) -> Result<Vec<f32>>;

    /// Read back the values of a field at `indices` (into its flat layout), in that order: what
    /// [`Grid::sample_with`] needs for a few bilinear samples, without the whole field. An
    /// index past the field is an error naming it. By default the whole field is read and
    /// picked from; GPU backends copy just those values where they are few.
    fn download_at(&mut self, field: FieldId, indices: &[usize]) -> Result<Vec<f32>> {
        if indices.is_empty() {
            return Ok(Vec::new());
        }
        pick(field, &self.download(field)?, indices)
    }

    /// [`Backend::download_at`] without waiting: the copy is queued behind every run submitted
    /// so far, so the values are those of the state after them (and of none submitted later),
    /// and the call returns at once. [`Backend::poll_download`] hands the values over once the
    /// device has made them; [`Backend::wait_download`] waits for them. A game asks for this
    /// frame's samples and takes them a frame or two later, and no frame waits for the GPU.
    /// Dropping the [`PendingRead`] lets the backend free what the read holds. By default
    /// (a backend whose runs are done when they return) the values are read at once.
    fn queue_download_at(&mut self, field: FieldId, indices: &[usize]) -> Result<PendingRead> {
        Ok(PendingRead::ready(self.name(), self.download_at(field, indices)?))
    }

    /// [`Backend::download`] without waiting, as [`Backend::queue_download_at`] does for a few
    /// values: the whole field as of the runs submitted so far, handed over by
    /// [`Backend::poll_download`] or [`Backend::wait_download`].
    fn queue_download(&mut self, field: FieldId) -> Result<PendingRead> {
        Ok(PendingRead::ready(self.name(), self.download(field)?))
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

    /// The reduction results of the last `run`, by slot (see [`crate::Op::Reduce`]).
    fn reductions(&mut self) -> Result<Vec<f64>>;

    /// Wait until every submitted run has finished (for timing). Synchronous backends return
    /// at once.
    fn finish(&mut self) -> Result<()> {
        Ok(())
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

impl<B: Backend + ?Sized> Backend for Box<B> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn device(&self) -> String {
        (**self).device()
    }
    fn allocate(&mut self, grid: &Grid) -> Result<()> {
        (**self).allocate(grid)
    }
    fn upload(&mut self, field: FieldId, data: &[f32]) -> Result<()> {
        (**self).upload(field, data)
    }
    fn download(&mut self, field: FieldId) -> Result<Vec<f32>> {
        (**self).download(field)
    }
    fn download_at(&mut self, field: FieldId, indices: &[usize]) -> Result<Vec<f32>> {
        (**self).download_at(field, indices)
    }
    fn queue_download_at(&mut self, field: FieldId, indices: &[usize]) -> Result<PendingRead> {
        (**self).queue_download_at(field, indices)
    }
    fn queue_download(&mut self, field: FieldId) -> Result<PendingRead> {
        (**self).queue_download(field)
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

/// A read queued by [`Backend::queue_download_at`] or [`Backend::queue_download`], to hand to
/// the same backend's [`Backend::poll_download`] or [`Backend::wait_download`].
#[derive(Debug)]
pub struct PendingRead {
    id: u64,
    by: &'static str,
    state: ReadState,
    /// The backend holds a [`Weak`] of it ([`ReadHandle`]), so it can tell a read dropped
    /// unread and free what it holds.
    alive: Arc<()>,
}

#[derive(Debug)]
enum ReadState {
    /// Read already (a backend without a device, or nothing to read).
    Ready(Vec<f32>),
    /// On the device: the backend has it under [`PendingRead::id`].
    Queued,
    /// Handed over.
    Taken,
}

/// What a backend keeps of a [`PendingRead`] it queued: its id, and whether the caller still
/// holds it.
#[derive(Debug)]
pub struct ReadHandle {
    /// [`PendingRead::id`].
    pub id: u64,
    alive: Weak<()>,
}

impl ReadHandle {
    /// Whether the [`PendingRead`] was dropped (its values can no longer be asked for).
    pub fn dropped(&self) -> bool {
        self.alive.strong_count() == 0
    }
}

/// What a GPU backend's queued read copies and how the copied values become the ones asked
/// for: a whole field, or the values at some indices (their [`Gather`] runs, or the whole field
/// to pick from where that is cheaper).
#[derive(Clone, Debug, PartialEq)]
pub struct ReadPlan {
    field: FieldId,
    len: usize,
    /// `None` for the whole field.
    indices: Option<Vec<usize>>,
    gather: Option<Gather>,
}

impl ReadPlan {
    /// All `len` values of `field`.
    pub fn whole(field: FieldId, len: usize) -> ReadPlan {
        ReadPlan { field, len, indices: None, gather: None }
    }

    /// The values of `field` (of `len` values) at `indices`; one past the field is an error
    /// naming it.
    pub fn at(field: FieldId, len: usize, indices: &[usize]) -> Result<ReadPlan> {
        let gather = Gather::plan(field, len, indices)?;
        Ok(ReadPlan { field, len, indices: Some(indices.to_vec()), gather })
    }

    /// The field read.
    pub fn field(&self) -> FieldId {
        self.field
    }

    /// `(first value, count)` of each run to copy, packed one after another from the start
    /// of the read-back buffer.
    pub fn runs(&self) -> Vec<(usize, usize)> {
        match &self.gather {
            Some(g) => g.runs.clone(),
            None => vec![(0, self.len)],
        }
    }

    /// Bytes the runs fill.
    pub fn bytes(&self) -> u64 {
        4 * self.gather.as_ref().map_or(self.len, |g| g.unique.len()) as u64
    }

    /// The values asked for, from those the runs copied (in their order).
    pub fn finish(&self, fetched: Vec<f32>) -> Result<Vec<f32>> {
        match (&self.indices, &self.gather) {
            (None, _) => Ok(fetched),
            (Some(indices), Some(g)) => Ok(g.scatter(indices, &fetched)),
            (Some(indices), None) => pick(self.field, &fetched, indices),
        }
    }
}

/// Ids unique in the process, so a read handed to another backend than its own is an error
/// rather than another read's values.
static NEXT_READ: AtomicU64 = AtomicU64::new(1);

impl PendingRead {
    fn new(by: &'static str, state: ReadState) -> PendingRead {
        PendingRead { id: NEXT_READ.fetch_add(1, Ordering::Relaxed), by, state, alive: Arc::new(()) }
    }

    /// A read whose values are there already (backend `by`'s).
    pub fn ready(by: &'static str, values: Vec<f32>) -> PendingRead {
        PendingRead::new(by, ReadState::Ready(values))
    }

    /// A read backend `by` queued on its device, and the handle it keeps of it.
    pub fn queued(by: &'static str) -> (PendingRead, ReadHandle) {
        let read = PendingRead::new(by, ReadState::Queued);
        let handle = ReadHandle { id: read.id, alive: Arc::downgrade(&read.alive) };
        (read, handle)
    }

    /// Its id, unique in the process.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The backend that queued it.
    pub fn backend(&self) -> &'static str {
        self.by
    }

    /// Whether its values were handed over.
    pub fn is_taken(&self) -> bool {
        matches!(self.state, ReadState::Taken)
    }

    /// For backend `by`'s [`Backend::poll_download`]: the values of a ready read (which is
    /// then taken), `None` for one on the device; an error for one taken already or queued by
    /// another kind of backend.
    pub fn take_ready(&mut self, by: &str) -> Result<Option<Vec<f32>>> {
        if self.by != by {
            return Err(Error::invalid("read", self.id, format!("it was queued on the {} backend, not {by}", self.by)));
        }
        match std::mem::replace(&mut self.state, ReadState::Taken) {
            ReadState::Ready(values) => Ok(Some(values)),
            ReadState::Queued => {
                self.state = ReadState::Queued;
                Ok(None)
            }
            ReadState::Taken => Err(Error::invalid("read", self.id, "its values were handed over already")),
        }
    }

    /// For a backend that has handed a queued read's values over.
    pub fn set_taken(&mut self) {
        self.state = ReadState::Taken;
    }

    /// The error for a queued read the backend `by` does not hold (another backend's of the
    /// same kind).
    pub fn unknown(&self, by: &str) -> Error {
        Error::invalid("read", self.id, format!("this {by} backend queued no such read (another one did)"))
    }
}

/// The values of `data` (field `field`'s) at `indices`, in that order; an index past the end
/// is an error naming it.
pub fn pick(field: FieldId, data: &[f32], indices: &[usize]) -> Result<Vec<f32>> {
    check_indices(field, data.len(), indices)?;
    Ok(indices.iter().map(|&k| data[k]).collect())
}

/// An error naming the first index of `indices` past a field of `len` values, if any.
pub fn check_indices(field: FieldId, len: usize, indices: &[usize]) -> Result<()> {
    match indices.iter().find(|&&k| k >= len) {
        Some(&k) => Err(Error::invalid(format!("{}[{k}]", field.name()), k, format!("the field has {len} values"))),
        None => Ok(()),
    }
}

/// The little-endian `f32` values of `bytes` (a GPU read-back's mapped memory), in one pass
/// straight into the returned vector: no intermediate copy of the bytes, and no alignment
/// required of them. Trailing bytes short of a value are left out.
pub fn f32s_le(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// The values a [`Backend::download_at`] call names, as a GPU backend copies them: each
/// distinct index once, in runs of consecutive indices (one copy region each).
#[derive(Clone, Debug, PartialEq)]
pub struct Gather {
    /// The distinct indices, ascending.
    pub unique: Vec<usize>,
    /// `(first index, count)` of each run of consecutive indices of `unique`, in order; their
    /// counts add up to `unique.len()`.
    pub runs: Vec<(usize, usize)>,
}

impl Gather {
    /// Copy regions past this many read the whole field instead.
    pub const MAX_RUNS: usize = 1024;

    /// Reads of up to this many bytes (16,384 values: a game's samples every frame) go
    /// through one staging buffer a GPU backend keeps, made at the first such read; larger
    /// ones through a buffer of their own.
    pub const KEPT_BYTES: u64 = 64 * 1024;

    /// The runs of `indices`.
    pub fn new(indices: &[usize]) -> Gather {
        let mut unique = indices.to_vec();
        unique.sort_unstable();
        unique.dedup();
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for &k in &unique {
            match runs.last_mut() {
                Some((start, n)) if *start + *n == k => *n += 1,
                _ => runs.push((k, 1)),
            }
        }
        Gather { unique, runs }
    }

    /// How a GPU backend should read `indices` of `field`, a field of `len` values: `Some`
    /// runs to copy, or `None` where reading the whole field is cheaper ([`Gather::worth_it`]);
    /// an index past the field is an error naming it ([`check_indices`]).
    pub fn plan(field: FieldId, len: usize, indices: &[usize]) -> Result<Option<Gather>> {
        check_indices(field, len, indices)?;
        let gather = Gather::new(indices);
        Ok(gather.worth_it(len).then_some(gather))
    }

    /// Whether copying the runs beats reading a whole field of `len` values: at most
    /// [`Gather::MAX_RUNS`] regions, and less than half the field.
    pub fn worth_it(&self, len: usize) -> bool {
        self.runs.len() <= Gather::MAX_RUNS && 2 * self.unique.len() < len
    }

    /// The values at `indices` (those [`Gather::new`] was given), from `fetched`, the values
    /// of [`Gather::unique`] in its order.
    pub fn scatter(&self, indices: &[usize], fetched: &[f32]) -> Vec<f32> {
        indices.iter().map(|k| self.unique.binary_search(k).map_or(f32::NAN, |at| fetched[at])).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A backend with only the required methods: fields in memory, runs that do nothing. Every
    /// other answer is the trait's default, what a backend of an integrator's own gets.
    #[derive(Default)]
    struct Memory {
        fields: std::collections::HashMap<FieldId, Vec<f32>>,
    }

    impl Backend for Memory {
        fn name(&self) -> &'static str {
            "memory"
        }
        fn device(&self) -> String {
            "the heap".into()
        }
        fn allocate(&mut self, grid: &Grid) -> Result<()> {
            self.fields = FieldId::STATE_AND_SCRATCH.iter().map(|f| (*f, vec![0.0; grid.len(*f)])).collect();
            Ok(())
        }
        fn upload(&mut self, field: FieldId, data: &[f32]) -> Result<()> {
            self.fields.insert(field, data.to_vec());
            Ok(())
        }
        fn download(&mut self, field: FieldId) -> Result<Vec<f32>> {
            Ok(self.fields[&field].clone())
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
        let grid = Grid::new(5, 4, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        b.allocate(&grid).expect("allocate");
        let density: Vec<f32> = (0..20).map(|k| k as f32 * 0.5).collect();
        b.upload(FieldId::Density, &density).expect("upload");
        // Values at indices, in the order asked, repeats kept; none for none; past the end refused.
        assert_eq!(b.download_at(FieldId::Density, &[7, 0, 19, 7]).expect("in range"), vec![3.5, 0.0, 9.5, 3.5]);
        assert_eq!(b.download_at(FieldId::Density, &[]).expect("none"), Vec::<f32>::new());
        let e = b.download_at(FieldId::Density, &[3, 20]).expect_err("index 20").to_string();
        assert!(e.contains("density[20]"), "{e}");
        // Queued reads are ready at once, handed over once, and counted nowhere.
        let mut read = b.queue_download_at(FieldId::Density, &[1, 2]).expect("queue");
        assert_eq!(b.poll_download(&mut read).expect("poll"), Some(vec![0.5, 1.0]));
        assert!(b.poll_download(&mut read).is_err(), "a read handed over twice");
        let whole = b.queue_download(FieldId::Density).expect("queue");
        assert_eq!(b.queued_reads(), 0);
        assert_eq!(b.wait_download(whole).expect("wait"), density);
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

    #[test]
    fn gathers_dedup_sort_and_run_their_indices() {
        let indices = [7, 3, 4, 9, 4, 8, 20, 3];
        let g = Gather::new(&indices);
        assert_eq!(g.unique, vec![3, 4, 7, 8, 9, 20]);
        assert_eq!(g.runs, vec![(3, 2), (7, 3), (20, 1)]);
        // Values of the unique indices (index · 10) back in the asked order.
        let fetched: Vec<f32> = g.unique.iter().map(|&k| k as f32 * 10.0).collect();
        assert_eq!(g.scatter(&indices, &fetched), indices.iter().map(|&k| k as f32 * 10.0).collect::<Vec<_>>());
        assert!(g.worth_it(13) && !g.worth_it(12));
        let many: Vec<usize> = (0..2 * (Gather::MAX_RUNS + 1)).step_by(2).collect();
        assert!(!Gather::new(&many).worth_it(1 << 30));
        assert!(Gather::new(&many[1..]).worth_it(1 << 30));
        // The plan: the runs where they are worth it, else none; past the field an error.
        assert_eq!(Gather::plan(FieldId::Density, 21, &indices).expect("in range"), Some(g));
        assert_eq!(
            Gather::plan(FieldId::Density, 7, &[2, 0, 1]).expect("in range").map(|g| g.runs),
            Some(vec![(0, 3)])
        );
        assert_eq!(Gather::plan(FieldId::Density, 6, &[2, 0, 1]).expect("in range"), None);
        let e = Gather::plan(FieldId::Density, 20, &indices).expect_err("index 20").to_string();
        assert!(e.contains("density[20]"), "{e}");
    }

    #[test]
    fn pending_reads_hand_their_values_over_once_to_their_own_kind_of_backend() {
        let mut ready = PendingRead::ready("cpu", vec![1.0, 2.0]);
        let e = ready.take_ready("wgpu").expect_err("another backend").to_string();
        assert!(e.contains("queued on the cpu backend, not wgpu"), "{e}");
        assert!(!ready.is_taken());
        assert_eq!(ready.take_ready("cpu").expect("ready"), Some(vec![1.0, 2.0]));
        assert!(ready.is_taken());
        let e = ready.take_ready("cpu").expect_err("taken").to_string();
        assert!(e.contains("handed over already") && e.contains(&ready.id().to_string()), "{e}");
        // Queued: not there, until the backend says so; its handle sees it dropped.
        let (mut queued, handle) = PendingRead::queued("vulkan");
        assert_eq!((handle.id, handle.dropped()), (queued.id(), false));
        assert_ne!(queued.id(), ready.id());
        assert_eq!(queued.take_ready("vulkan").expect("queued"), None);
        assert!(!queued.is_taken());
        queued.set_taken();
        assert!(queued.take_ready("vulkan").is_err());
        drop(queued);
        assert!(handle.dropped());
    }

    #[test]
    fn read_plans_copy_runs_or_the_whole_field_and_hand_back_what_was_asked() {
        let whole = ReadPlan::whole(FieldId::Density, 5);
        assert_eq!((whole.runs(), whole.bytes()), (vec![(0, 5)], 20));
        assert_eq!(whole.finish(vec![1.0, 2.0, 3.0, 4.0, 5.0]).expect("whole"), vec![1.0, 2.0, 3.0, 4.0, 5.0]);
        // A few of many values: their runs, scattered back in the asked order.
        let few = ReadPlan::at(FieldId::Density, 100, &[7, 3, 4, 7]).expect("in range");
        assert_eq!((few.runs(), few.bytes()), (vec![(3, 2), (7, 1)], 12));
        assert_eq!(few.finish(vec![30.0, 40.0, 70.0]).expect("few"), vec![70.0, 30.0, 40.0, 70.0]);
        // Most of the field: read whole and picked from.
        let most = ReadPlan::at(FieldId::Density, 4, &[3, 0, 1]).expect("in range");
        assert_eq!((most.runs(), most.bytes()), (vec![(0, 4)], 16));
        assert_eq!(most.finish(vec![0.5, 1.5, 2.5, 3.5]).expect("most"), vec![3.5, 0.5, 1.5]);
        let e = ReadPlan::at(FieldId::U, 4, &[4]).expect_err("past the field").to_string();
        assert!(e.contains("u[4]"), "{e}");
    }

    #[test]
    fn little_endian_bytes_read_as_floats() {
        let values = [1.5f32, -0.0, f32::MAX, 3.25e-39];
        let mut bytes: Vec<u8> = values.iter().flat_map(|x| x.to_le_bytes()).collect();
        bytes.push(0xff);
        let read = f32s_le(&bytes[..]);
        assert_eq!(read.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), values.map(f32::to_bits));
        // Not aligned to four bytes.
        assert_eq!(f32s_le(&bytes[1..]).len(), 4);
        assert_eq!(f32s_le(&bytes[1..5])[0].to_bits(), u32::from_le_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]));
    }

    #[test]
    fn picks_past_the_field_are_errors_naming_the_index() {
        let data = [1.0, 2.0, 3.0];
        assert_eq!(pick(FieldId::Density, &data, &[2, 0, 2]).expect("in range"), vec![3.0, 1.0, 3.0]);
        let e = pick(FieldId::Density, &data, &[1, 3]).expect_err("past the end").to_string();
        assert!(e.contains("density[3]") && e.contains("3 values"), "{e}");
    }
}
