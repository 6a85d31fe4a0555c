//! # swirly-cpu
//!
//! The CPU backend: every kernel on rayon, one file per kernel in `kernels`, written one
//! function per cell so it reads like the shaders, and reached from a table by the kernel's
//! descriptor.
//!
//! Results are bit-identical for any number of threads: every output value is computed by the
//! same sequential code from the same inputs, and reductions sum per-row partials in row order.
// docs.rs marks what each Cargo feature enables.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod dispatch;
pub(crate) mod kernels;
pub mod simd;

use std::time::Instant;

use rayon::prelude::*;
use swirly_core::backend;
use swirly_core::frame::uniform::SplatGpu;
use swirly_core::ir::resource;
use swirly_core::ir::schedule::{Op, ReduceOp};
use swirly_core::{
    Backend, Error, Format, Kernel, KernelTiming, MemoryReport, ResourceDesc, ResourceId, Result, Schedule, Shape,
    StepInputs, TimestampTimings,
};

use dispatch::Ctx;
use kernels::common::G;

/// Runs `f` on worker 0 of `pool` while the pool's other workers stay awake until it returns,
/// and returns what `f` returned (`None` only if `f` could not be taken, which nothing here
/// allows).
///
/// A step is a chain of short parallel kernels with short serial gaps between them (the schedule
/// loop, a splat's setup, a kernel's last rows). rayon's idle loop puts a worker to sleep after
/// some tens of microseconds without work, and waking it again costs the thread that pushes the
/// next kernel's work 5–20 µs (more in a virtual machine), many times a step. So here each other
/// worker runs a loop that takes the pool's pending jobs (`rayon::yield_now`) and yields its
/// core to the OS where there are none, until `f` returns; then the workers go back to rayon's
/// idle loop. Which worker computes which rows does not change the results (see the crate's
/// documentation).
fn awake<R: Send>(pool: &rayon::ThreadPool, f: impl FnOnce() -> R + Send) -> Option<R> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    /// Releases the other workers when `f` returns or unwinds.
    struct Release<'a>(&'a AtomicBool);
    impl Drop for Release<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }
    let others = pool.current_num_threads() - 1;
    let (looping, done) = (AtomicUsize::new(0), AtomicBool::new(false));
    // `broadcast` takes a shared closure; worker 0 alone takes `f` out.
    let f = std::sync::Mutex::new(Some(f));
    let results = pool.broadcast(|ctx| {
        if ctx.index() == 0 {
            let _release = Release(&done);
            // `f` starts once every other worker is in its loop. A worker that took one of
            // `f`'s jobs first (it may, while its own copy of this closure is not yet queued)
            // could run its loop on top of that job's wait for another, and hold the job below
            // it until `f` returned: a deadlock. Before `f` starts, the pool (the backend's own)
            // has no jobs but these, so each worker enters the loop from its idle loop, at the bottom of its
            // stack, and the jobs it runs on top of the loop never wait on anything below.
            while looping.load(Ordering::Acquire) < others {
                std::thread::yield_now();
            }
            let f = f.lock().ok().and_then(|mut f| f.take());
            return f.map(|f| f());
        }
        looping.fetch_add(1, Ordering::AcqRel);
        while !done.load(Ordering::Acquire) {
            if rayon::yield_now() != Some(rayon::Yield::Executed) {
                std::thread::yield_now();
            }
        }
        None
    });
    results.into_iter().next().flatten()
}

/// The rayon backend.
pub struct CpuBackend {
    pool: std::sync::Arc<rayon::ThreadPool>,
    /// The resources held, as last allocated.
    resources: Vec<ResourceDesc>,
    /// Physical buffers (one per resource, moved to their resource's index by `allocate`).
    buffers: Vec<Vec<f32>>,
    /// Resource → physical buffer (changed by swaps).
    map: Vec<usize>,
    reductions: Vec<f64>,
    timing: Option<TimestampTimings>,
    /// Scratch of `mg_smooth2`, `apply_forces` and `relax`, grown by the first schedule that
    /// needs it and kept between steps.
    scratch: Vec<f32>,
    /// The most bytes held at once ([`swirly_core::MemoryReport::peak`]).
    peak: u64,
}

impl std::fmt::Debug for CpuBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuBackend")
            .field("threads", &self.pool.current_num_threads())
            .field("resources", &self.resources.len())
            .finish_non_exhaustive()
    }
}

/// Most worker threads a [`CpuBackend`] takes: more than any machine has cores, and few
/// enough that the per-thread scratch stays small.
pub const MAX_THREADS: usize = 1024;

fn cpu_err(message: impl Into<String>) -> Error {
    Error::Backend { backend: "cpu", message: message.into() }
}

impl CpuBackend {
    /// A backend on as many threads as the machine has cores.
    pub fn new() -> Result<CpuBackend> {
        CpuBackend::with_threads(0)
    }

    /// A backend on `threads` worker threads (`0`: one per core; at most [`MAX_THREADS`]).
    pub fn with_threads(threads: usize) -> Result<CpuBackend> {
        if threads > MAX_THREADS {
            return Err(Error::invalid(
                "threads",
                threads,
                format!("at most {MAX_THREADS} (each thread gets its own scratch rows; 0 means one per core)"),
            ));
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("fluid-cpu-{i}"))
            .build()
            .map_err(|e| cpu_err(format!("cannot start threads: {e}")))?;
        Ok(CpuBackend {
            pool: std::sync::Arc::new(pool),
            resources: Vec::new(),
            buffers: Vec::new(),
            map: Vec::new(),
            reductions: Vec::new(),
            timing: None,
            scratch: Vec::new(),
            peak: 0,
        })
    }

    /// The values of resource `id` (a grid field: `FieldId::Density.into()`) where the backend
    /// keeps them, with no copy (what [`Backend::download`] copies out), laid out as
    /// `swirly_core::grid` describes. Steps ping-pong fields between buffers, so ask again after
    /// every step; the borrow ends before the next one, which needs `&mut`. The GPU backends'
    /// counterparts are `field_buffer`.
    pub fn field_slice(&self, id: impl Into<ResourceId>) -> Result<&[f32]> {
        let id = id.into();
        backend::desc(&self.resources, id, "cpu")?;
        Ok(self.buf(id))
    }

    /// Worker threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    fn buf(&self, id: ResourceId) -> &[f32] {
        // Its own values only: a transient's buffer may be its group's larger one.
        &self.buffers[self.map[id.index()]][..held(&self.resources[id.index()])]
    }

    /// Check every operation of `schedule` against the resources and the kernel table before
    /// anything runs, so that a bad schedule is an error rather than a panic midway.
    fn check(&self, schedule: &Schedule) -> Result<()> {
        let known = |id: ResourceId| match self.resources.get(id.index()) {
            Some(r) => r.check_grid(schedule.grid()),
            None => {
                Err(Error::invalid("resource", id.0, format!("the backend holds {} resources", self.resources.len())))
            }
        };
        swirly_core::ir::lower::check_resources(schedule, &self.resources)?;
        for op in schedule.ops() {
            match op {
                Op::Dispatch(d) => {
                    if kernels::entry(d.kernel).is_none() {
                        return Err(cpu_err(format!("no CPU kernel `{}`", d.kernel.name)));
                    }
                    if d.resources.len() != d.kernel.bindings.len() || d.params.is_some() != d.kernel.params.is_some() {
                        return Err(cpu_err(format!("a dispatch of {} that does not match its kernel", d.kernel.name)));
                    }
                    d.resources.iter().try_for_each(|r| known(*r))?;
                }
                Op::Swap(a, b) => {
                    known(*a)?;
                    known(*b)?;
                }
                Op::Reduce { resource, .. } => known(*resource)?,
            }
        }
        Ok(())
    }

    /// Grow the kernels' scratch to what `schedule` needs on the grid `g`: two fields of cells
    /// for `apply_forces` and `relax`, `mg_smooth2`'s bands.
    fn reserve_scratch(&mut self, g: &G, schedule: &Schedule) -> Result<()> {
        let need = scratch_len(g, self.threads(), schedule);
        if need > self.scratch.len() {
            // Growing copies the old scratch into the new before freeing it.
            self.peak = self.peak.max(self.bytes_held() + 4 * need as u64);
            self.scratch.try_reserve_exact(need - self.scratch.len()).map_err(|e| Error::OutOfMemory {
                what: "the cpu kernels' scratch".into(),
                bytes: 4 * need as u64,
                reason: e.to_string(),
            })?;
            self.scratch.resize(need, 0.0);
        }
        Ok(())
    }

    /// Bytes of its buffers and scratch now.
    fn bytes_held(&self) -> u64 {
        4 * (self.buffers.iter().map(Vec::capacity).sum::<usize>() + self.scratch.capacity()) as u64
    }

    /// Count one invocation of `entry` started at `start` (`None`: timing is off).
    fn timed(&mut self, entry: &'static str, start: Option<Instant>) {
        if let (Some(t0), Some(timing)) = (start, self.timing.as_mut()) {
            timing.record(entry, t0.elapsed().as_secs_f64() * 1e3);
        }
    }

    fn reduce(&self, g: &G, id: ResourceId, op: ReduceOp) -> f64 {
        let data = self.buf(id);
        let desc = &self.resources[id.index()];
        // Row by row (partials summed in row order: any thread count gives the same bits).
        let cols = match (desc.shape, desc.format) {
            (Shape::XFaces, _) => g.nx + 1,
            (Shape::Cells, Format::Vec4F32 | Format::Vec4F16) => 4 * g.nx,
            _ => g.nx,
        }
        .max(1);
        let rows: Vec<f64> = data
            .par_chunks(cols)
            .map(|row| match op {
                ReduceOp::MaxAbs => f64::from(row.iter().fold(0.0f32, |m, x| max_abs(m, *x))),
                ReduceOp::SumSquares => row.iter().map(|x| f64::from(*x) * f64::from(*x)).sum(),
            })
            .collect();
        match op {
            ReduceOp::MaxAbs => f64::from(rows.into_iter().fold(0.0f32, |m, x| max_abs(m, x as f32))),
            ReduceOp::SumSquares => rows.into_iter().sum(),
        }
    }
}

/// max(m, |x|) for m ≥ 0 by the bits of |x|: NaN above +inf above every finite value, so a
/// non-finite value is never skipped (as `f32::max` skips NaN). The shader does the same.
fn max_abs(m: f32, x: f32) -> f32 {
    f32::from_bits(m.to_bits().max(x.to_bits() & 0x7fff_ffff))
}

/// Values of the kernels' scratch that `schedule` needs on `threads` workers on grid `g`: two
/// fields of cells where it runs `apply_forces` or `relax` (`relax`'s inflows take one),
/// `mg_smooth2`'s band buffers (about three and a half bands of rows per worker) where it runs
/// that; the larger.
fn scratch_len(g: &G, threads: usize, schedule: &Schedule) -> usize {
    use swirly_core::grid::kernels::{APPLY_FORCES, MG_SMOOTH2, RELAX};
    let runs = |k: Kernel| schedule.dispatches().any(|d| d.kernel == k);
    let mut need = 0;
    if runs(APPLY_FORCES) || runs(RELAX) {
        need = 2 * g.nx * g.ny;
    }
    if runs(MG_SMOOTH2) {
        need = need.max(kernels::mg_smooth2::scratch_len(g.nx, g.ny, threads));
    }
    need
}

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn device(&self) -> String {
        let n = self.threads();
        format!("{n} thread{}, {}", if n == 1 { "" } else { "s" }, simd::short_name())
    }

    fn allocate(&mut self, resources: &[ResourceDesc]) -> Result<()> {
        // Transient resources share their group owner's memory and keep nothing.
        let owners = resource::owners(resources);
        let owns = |i: usize| owners[i] == i;
        let same = |i: usize| resources[i].shares().is_none() && self.resources.get(i) == Some(&resources[i]);
        let fresh: u64 =
            (0..resources.len()).filter(|i| owns(*i) && !same(*i)).map(|i| 4 * held(&resources[i]) as u64).sum();
        // Linux overcommits: a reservation larger than memory succeeds and the process is killed
        // later, so compare with what the machine has first.
        if let Some(avail) = backend::available_memory()
            && fresh > avail
        {
            return Err(Error::OutOfMemory {
                what: format!("{} resources", resources.len()),
                bytes: fresh,
                reason: format!("only {avail} bytes of memory are available"),
            });
        }
        // The new buffers are made while the old are held.
        self.peak = self.peak.max(self.bytes_held() + fresh);
        let mut made = Vec::with_capacity(resources.len());
        for (i, r) in resources.iter().enumerate() {
            if same(i) {
                made.push(None);
                continue;
            }
            let n = if owns(i) { held(r) } else { 0 };
            let mut v: Vec<f32> = Vec::new();
            v.try_reserve_exact(n).map_err(|e| Error::OutOfMemory {
                what: format!("resource `{}`", r.name),
                bytes: 4 * held(r) as u64,
                reason: format!("allocating it failed: {e}"),
            })?;
            v.resize(n, 0.0);
            made.push(Some(v));
        }
        // Each resource's data at its own index: what it held (wherever swaps had put it), or
        // its new buffer.
        let mut old: Vec<Option<Vec<f32>>> = std::mem::take(&mut self.buffers).into_iter().map(Some).collect();
        self.buffers = made
            .into_iter()
            .enumerate()
            .map(|(i, new)| new.or_else(|| old[self.map[i]].take()).unwrap_or_default())
            .collect();
        self.map = owners;
        self.resources = resources.to_vec();
        self.peak = self.peak.max(self.bytes_held());
        Ok(())
    }

    fn resources(&self) -> &[ResourceDesc] {
        &self.resources
    }

    fn write(&mut self, id: ResourceId, bytes: &[u8]) -> Result<()> {
        let desc = backend::desc(&self.resources, id, "cpu")?;
        desc.check_bytes(bytes.len())?;
        let (format, n, i) = (desc.format, held(desc), self.map[id.index()]);
        if format.is_half() {
            self.buffers[i][..n].copy_from_slice(&backend::values_le(format, n, bytes));
        } else {
            bytemuck::cast_slice_mut::<f32, u8>(&mut self.buffers[i][..n]).copy_from_slice(bytes);
        }
        Ok(())
    }

    fn read(&mut self, id: ResourceId) -> Result<Vec<u32>> {
        let format = backend::desc(&self.resources, id, "cpu")?.format;
        let values = self.field_slice(id)?;
        if format.is_half() {
            return Ok(backend::u32s_le(&backend::values_to_le(format, values)));
        }
        Ok(bytemuck::cast_slice(values).to_vec())
    }

    fn resource_bytes(&self, desc: &ResourceDesc) -> u64 {
        4 * held(desc) as u64
    }

    fn download(&mut self, id: ResourceId) -> Result<Vec<f32>> {
        Ok(self.field_slice(id)?.to_vec())
    }

    fn download_at(&mut self, id: ResourceId, indices: &[usize]) -> Result<Vec<f32>> {
        let name = backend::desc(&self.resources, id, "cpu")?.name;
        backend::pick(name, self.buf(id), indices)
    }

    fn run(&mut self, schedule: &Schedule, inputs: &StepInputs) -> Result<()> {
        if self.resources.is_empty() {
            return Err(Error::NotAllocated("cpu"));
        }
        self.check(schedule)?;
        inputs.check_records()?;
        let g = G::new(&bytemuck::pod_read_unaligned(schedule.uniform()));
        self.reserve_scratch(&g, schedule)?;
        // The records are the models' splats: what the splat and pointer twins read.
        let splats: &[SplatGpu] = inputs.records.as_slice();
        self.reductions = vec![0.0; schedule.reduction_slots()];
        let pool = std::sync::Arc::clone(&self.pool);
        awake(&pool, || -> Result<()> {
            for op in schedule.ops() {
                match op {
                    Op::Dispatch(d) => {
                        let start = self.timing.is_some().then(Instant::now);
                        let phys: Vec<usize> = d.resources.iter().map(|r| self.map[r.index()]).collect();
                        let lens: Vec<usize> = d.resources.iter().map(|r| held(&self.resources[r.index()])).collect();
                        let mut slots = dispatch::bind(&mut self.buffers, &phys, &lens, d.kernel)?;
                        let mut ctx =
                            Ctx { g: &g, dt: inputs.dt, time: inputs.time, splats, scratch: &mut self.scratch };
                        if let Some(run) = kernels::entry(d.kernel) {
                            run(&mut ctx, d, &mut slots);
                        }
                        slots.check()?;
                        // What an f16 resource stores: the values written, rounded.
                        for (slot, r) in d.kernel.bindings.iter().zip(&d.resources) {
                            if slot.access.writes() && self.resources[r.index()].format.is_half() {
                                let n = held(&self.resources[r.index()]);
                                backend::round_to_half(&mut self.buffers[self.map[r.index()]][..n]);
                            }
                        }
                        self.timed(d.kernel.name, start);
                    }
                    Op::Swap(a, b) => self.map.swap(a.index(), b.index()),
                    Op::Reduce { resource, op, slot } => {
                        let start = self.timing.is_some().then(Instant::now);
                        let r = self.reduce(&g, *resource, *op);
                        self.reductions[*slot] = r;
                        self.timed("reduce", start);
                    }
                }
            }
            Ok(())
        })
        .ok_or_else(|| cpu_err("the step did not run on the worker pool"))?
    }

    fn reductions(&mut self) -> Result<Vec<f64>> {
        Ok(self.reductions.clone())
    }

    fn working_memory(&self, _resources: &[ResourceDesc], schedules: &[Schedule]) -> u64 {
        // Reads and writes copy straight from and to the caller's memory: only the kernels'
        // scratch, which a schedule grows and which never shrinks.
        let need = (schedules.iter())
            .map(|s| scratch_len(&G::new(&bytemuck::pod_read_unaligned(s.uniform())), self.threads(), s))
            .max()
            .unwrap_or(0);
        4 * need.max(self.scratch.capacity()) as u64
    }

    fn memory(&self) -> Result<MemoryReport> {
        let owners = resource::owners(&self.resources);
        let resources: Vec<(&'static str, u64)> = self
            .resources
            .iter()
            .enumerate()
            .map(|(i, r)| (r.name, if owners[i] == i { 4 * self.buffers[self.map[i]].capacity() as u64 } else { 0 }))
            .collect();
        let total = resources.iter().map(|r| r.1).sum::<u64>() + 4 * self.scratch.capacity() as u64;
        Ok(MemoryReport { resources, total, reserved: total, peak: self.peak.max(total) })
    }

    fn copy_bandwidth(&mut self) -> Result<f64> {
        // 256 MiB each way, copied in parallel chunks; the best of five.
        let n = 64 << 20;
        let src = vec![1.0f32; n];
        let mut dst = vec![0.0f32; n];
        let pool = std::sync::Arc::clone(&self.pool);
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            let t0 = Instant::now();
            pool.install(|| {
                dst.par_chunks_mut(1 << 16).zip(src.par_chunks(1 << 16)).for_each(|(d, s)| d.copy_from_slice(s));
            });
            best = best.min(t0.elapsed().as_secs_f64());
        }
        Ok(2.0 * (n * 4) as f64 / best / 1e9)
    }

    fn set_timing(&mut self, enabled: bool) -> Result<()> {
        self.timing = enabled.then(TimestampTimings::default);
        Ok(())
    }

    fn take_timings(&mut self) -> Result<Vec<KernelTiming>> {
        let timing =
            self.timing.as_mut().ok_or_else(|| cpu_err("timings were not enabled (call set_timing(true) first)"))?;
        Ok(timing.take())
    }
}

/// The `f32` values the CPU holds for resource `r`: its words, or one per value of an `f16`
/// resource (kept as `f32` rounded to `f16` after every kernel that writes it: the values a GPU
/// stores, at the memory of `f32`).
fn held(r: &ResourceDesc) -> usize {
    if r.format.is_half() { r.scalars() as usize } else { r.words() as usize }
}

#[cfg(test)]
mod tests {
    use super::awake;
    use rayon::prelude::*;
    use std::sync::mpsc;
    use std::time::Duration;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool")
    }

    /// The kernels' scratch a schedule needs: none for plain sweeps; two fields of cells for
    /// `apply_forces`; for `mg_smooth2`, one band of the whole 80 rows (8000 cells is one band),
    /// three arrays of its rows and a halo of 5 on each side, and two residual rows, 100 wide;
    /// with 64 workers on a wide grid, the bands of the finest level, two rows each.
    #[test]
    fn the_scratch_is_what_the_schedule_runs() {
        use swirly_core::grid::step;
        use swirly_core::params::PressureSolver;
        use swirly_core::{Boundary, Grid, SimParams};
        let grid = Grid::new(100, 80, 0.1, Boundary::Wall, Boundary::Periodic).expect("grid");
        let g = super::G::new(&grid.uniform());
        let sweeps = step::jacobi_sweeps(&grid, PressureSolver::Jacobi, None, 3);
        assert_eq!(super::scratch_len(&g, 2, &sweeps), 0);
        let mut p = SimParams { gravity: [0.0, -1.0], ..SimParams::default() };
        assert_eq!(super::scratch_len(&g, 2, &step::step(&grid, &p)), 2 * 100 * 80, "forces, jacobi");
        p.pressure.solver = PressureSolver::Multigrid;
        let bands = 100 * (3 * (80 + 2 * 5) + 2);
        assert_eq!(super::scratch_len(&g, 2, &step::step(&grid, &p)), bands.max(2 * 100 * 80));
        let wide = Grid::new(4000, 8, 0.1, Boundary::Wall, Boundary::Wall).expect("grid");
        let bands = crate::kernels::mg_smooth2::scratch_len(4000, 8, 64);
        assert!(bands >= 2 * 4000 * 8, "at least two fields of cells: {bands}");
        let g = super::G::new(&wide.uniform());
        assert_eq!(super::scratch_len(&g, 64, &step::step(&wide, &p)), bands);
    }

    #[test]
    fn the_device_names_its_thread_count() {
        use swirly_core::Backend;
        let one = super::CpuBackend::with_threads(1).expect("one thread").device();
        let two = super::CpuBackend::with_threads(2).expect("two threads").device();
        assert!(one.starts_with("1 thread, ") && two.starts_with("2 threads, "), "{one} / {two}");
    }

    /// `field_slice` is the field as it is now: what `download` copies, after steps that
    /// ping-pong the buffers too; before `allocate` it is an error.
    #[test]
    fn field_slice_borrows_what_download_copies() {
        use swirly_core::{Backend, Boundary, Error, FieldId, Grid, GridFields, SimParams, Splat, StepInputs};
        let mut b = super::CpuBackend::with_threads(2).expect("backend");
        assert!(matches!(b.field_slice(FieldId::Density), Err(Error::NotAllocated("cpu"))));
        let grid = Grid::new(24, 17, 1.0, Boundary::Wall, Boundary::Periodic).expect("grid");
        let params = SimParams { viscosity: 0.01, ..SimParams::default() };
        b.allocate(GridFields::declare(&grid, &params).resources()).expect("allocate");
        let step = swirly_core::grid::step::step(&grid, &params);
        let splat = Splat { center: [12.0, 6.0], radius: 3.0, velocity: [1.0, 2.0], density: 1.0, ..Splat::default() };
        for k in 0..5 {
            b.run(
                &step,
                &StepInputs {
                    dt: 0.1,
                    time: 0.1 * k as f32,
                    step: k,
                    records: swirly_core::splat::records(&[splat], &grid).expect("splats"),
                },
            )
            .expect("step");
            for field in [FieldId::U, FieldId::V, FieldId::Density, FieldId::Pressure] {
                let copy = b.download(field.into()).expect("download");
                let view = b.field_slice(field).expect("field_slice");
                assert_eq!(view.len(), grid.len(field), "{}", field.name());
                assert!(view.iter().zip(&copy).all(|(x, y)| x.to_bits() == y.to_bits()), "{}", field.name());
            }
        }
        assert!(b.field_slice(FieldId::Density).expect("density").iter().any(|d| *d > 0.1), "no splat arrived");
    }

    #[test]
    fn awake_returns_what_f_returns_from_worker_0() {
        for threads in [1, 2, 3] {
            let p = pool(threads);
            let (sum, worker) = awake(&p, || {
                let sum: u64 = (0..10_000u64).into_par_iter().sum();
                (sum, rayon::current_thread_index())
            })
            .expect("f ran");
            assert_eq!(sum, 49_995_000);
            assert_eq!(worker, Some(0), "{threads} threads");
        }
    }

    #[test]
    fn the_awake_workers_take_the_jobs_f_pushes() {
        let p = pool(3);
        let workers = awake(&p, || {
            let mut seen: Vec<usize> = (0..60)
                .into_par_iter()
                .with_max_len(1)
                .map(|_| {
                    std::thread::sleep(Duration::from_millis(2));
                    rayon::current_thread_index().unwrap_or(usize::MAX)
                })
                .collect();
            seen.sort_unstable();
            seen.dedup();
            seen
        })
        .expect("f ran");
        assert_eq!(workers, [0, 1, 2]);
    }

    #[test]
    fn many_workers_start_many_steps_without_deadlock() {
        // A worker that took a job of `f` before its own loop, and then ran the loop on top of
        // that job's wait, would hold the job until `f` returned: `awake` starts `f` only when
        // every other worker is in its loop. (On two cores the race is rare; on 16 it hung
        // `fluid bench` before that.)
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let p = pool(16);
            let mut total = 0u64;
            for _ in 0..300 {
                total +=
                    awake(&p, || (0..4096u32).into_par_iter().with_max_len(8).map(u64::from).sum::<u64>()).unwrap_or(0);
            }
            tx.send(total).ok();
        });
        let total = rx.recv_timeout(Duration::from_secs(60)).expect("300 calls returned");
        assert_eq!(total, 300 * 4095 * 4096 / 2);
    }

    #[test]
    fn a_panic_in_f_releases_the_workers() {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let p = pool(3);
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                awake(&p, || -> u32 { panic!("a kernel panicked") })
            }));
            let again = awake(&p, || 7);
            tx.send((caught.is_err(), again)).ok();
        });
        let (panicked, again) = rx.recv_timeout(Duration::from_secs(30)).expect("awake returned after the panic");
        assert!(panicked);
        assert_eq!(again, Some(7));
    }
}
