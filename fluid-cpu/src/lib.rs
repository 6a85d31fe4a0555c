//! # fluid-cpu
//!
//! The CPU backend: every kernel of [`fluid_core::Kernel`] on rayon, one file per kernel in
//! [`kernels`], written one function per cell so it reads like the shaders.
//!
//! Results are bit-identical for any number of threads: every output value is computed by the
//! same sequential code from the same inputs, and reductions sum per-row partials in row order.

pub mod kernels;
pub mod simd;

use std::time::Instant;

use fluid_core::schedule::{Dispatch, Op, Params, ReduceOp};
use fluid_core::uniforms::SplatGpu;
use fluid_core::{Backend, Error, FieldId, Grid, Kernel, KernelTiming, Result, Schedule, StepInputs, TimestampTimings};
use rayon::prelude::*;

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
    grid: Option<Grid>,
    /// Physical buffers, indexed by [`FieldId::index`] at allocation.
    buffers: Vec<Vec<f32>>,
    /// Logical field → physical buffer (changed by swaps).
    map: [usize; FieldId::COUNT],
    reductions: Vec<f64>,
    timing: Option<TimestampTimings>,
    /// Scratch of `mg_smooth2`, `apply_forces` and `relax`, allocated with the fields and kept
    /// between steps.
    scratch: Vec<f32>,
}

impl std::fmt::Debug for CpuBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuBackend")
            .field("threads", &self.pool.current_num_threads())
            .field("grid", &self.grid)
            .finish_non_exhaustive()
    }
}

/// Most worker threads a [`CpuBackend`] takes: more than any machine has cores, and few
/// enough that the per-thread scratch stays small.
pub const MAX_THREADS: usize = 1024;

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
            .map_err(|e| Error::Backend { backend: "cpu", message: format!("cannot start threads: {e}") })?;
        Ok(CpuBackend {
            pool: std::sync::Arc::new(pool),
            grid: None,
            buffers: Vec::new(),
            map: std::array::from_fn(|i| i),
            reductions: Vec::new(),
            timing: None,
            scratch: Vec::new(),
        })
    }

    /// The values of `field` where the backend keeps them, with no copy (what
    /// [`Backend::download`] copies out): laid out as `fluid_core::grid` describes. Steps
    /// ping-pong fields between buffers, so ask again after every step; the borrow ends before
    /// the next one, which needs `&mut`. The GPU backends' counterparts are `field_buffer`.
    pub fn field_slice(&self, field: FieldId) -> Result<&[f32]> {
        self.grid()?;
        Ok(self.buf(field))
    }

    /// Worker threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    fn grid(&self) -> Result<Grid> {
        self.grid.ok_or(Error::NotAllocated("cpu"))
    }

    fn buf(&self, f: FieldId) -> &[f32] {
        &self.buffers[self.map[f.index()]]
    }

    fn take(&mut self, f: FieldId) -> Vec<f32> {
        std::mem::take(&mut self.buffers[self.map[f.index()]])
    }

    fn put(&mut self, f: FieldId, data: Vec<f32>) {
        self.buffers[self.map[f.index()]] = data;
    }

    fn dispatch(&mut self, g: &G, d: &Dispatch, dt: f32, splats: &[SplatGpu]) {
        use kernels::*;
        let f = |slot: &str| d.field(slot);
        match (d.kernel, d.params) {
            (Kernel::AdvectVelocity, Params::Advect(p)) => {
                let (mut uo, mut vo) = (self.take(f("u_out")), self.take(f("v_out")));
                advect_velocity::run(g, &p, dt, self.buf(f("u")), self.buf(f("v")), &mut uo, &mut vo);
                self.put(f("u_out"), uo);
                self.put(f("v_out"), vo);
            }
            (Kernel::AdvectCells, Params::Advect(p)) => {
                let mut d_out = self.take(f("density_out"));
                let mut t_out = self.take(f("temperature_out"));
                let mut c_out = self.take(f("dye_out"));
                advect_cells::run(
                    g,
                    &p,
                    dt,
                    self.buf(f("u")),
                    self.buf(f("v")),
                    advect_cells::CellFields {
                        density: self.buf(f("density")),
                        temperature: self.buf(f("temperature")),
                        dye: self.buf(f("dye")),
                        density_out: &mut d_out,
                        temperature_out: &mut t_out,
                        dye_out: &mut c_out,
                    },
                );
                self.put(f("density_out"), d_out);
                self.put(f("temperature_out"), t_out);
                self.put(f("dye_out"), c_out);
            }
            (Kernel::Splat, Params::None) => {
                let mut u = self.take(f("u"));
                let mut v = self.take(f("v"));
                let mut den = self.take(f("density"));
                let mut tem = self.take(f("temperature"));
                let mut dye = self.take(f("dye"));
                splat::run(
                    g,
                    splats,
                    splat::SplatFields {
                        u: &mut u,
                        v: &mut v,
                        density: &mut den,
                        temperature: &mut tem,
                        dye: &mut dye,
                    },
                );
                self.put(f("u"), u);
                self.put(f("v"), v);
                self.put(f("density"), den);
                self.put(f("temperature"), tem);
                self.put(f("dye"), dye);
            }
            (Kernel::Curl, Params::None) => {
                let mut out = self.take(f("curl"));
                curl::run(g, self.buf(f("u")), self.buf(f("v")), &mut out);
                self.put(f("curl"), out);
            }
            (Kernel::ApplyForces, Params::Forces(p)) => {
                let (mut u, mut v) = (self.take(f("u")), self.take(f("v")));
                let mut scratch = std::mem::take(&mut self.scratch);
                apply_forces::run(
                    g,
                    &p,
                    dt,
                    &mut u,
                    &mut v,
                    self.buf(f("density")),
                    self.buf(f("temperature")),
                    self.buf(f("curl")),
                    &mut scratch,
                );
                self.scratch = scratch;
                self.put(f("u"), u);
                self.put(f("v"), v);
            }
            (Kernel::DiffuseVelocity, Params::Diffuse(p)) => {
                let (mut uo, mut vo) = (self.take(f("u_out")), self.take(f("v_out")));
                diffuse_velocity::run(
                    g,
                    &p,
                    dt,
                    self.buf(f("u0")),
                    self.buf(f("v0")),
                    self.buf(f("u")),
                    self.buf(f("v")),
                    &mut uo,
                    &mut vo,
                );
                self.put(f("u_out"), uo);
                self.put(f("v_out"), vo);
            }
            (Kernel::Divergence, Params::None) => {
                let mut out = self.take(f("divergence"));
                divergence::run(g, self.buf(f("u")), self.buf(f("v")), &mut out);
                self.put(f("divergence"), out);
            }
            (Kernel::Jacobi, Params::Jacobi(p)) => {
                let mut out = self.take(f("pressure_out"));
                jacobi::run(g, &p, dt, self.buf(f("pressure")), self.buf(f("divergence")), &mut out);
                self.put(f("pressure_out"), out);
            }
            (Kernel::JacobiMultisweep, Params::Jacobi(p)) => {
                let mut out = self.take(f("pressure_out"));
                jacobi_multisweep::run(g, &p, dt, self.buf(f("pressure")), self.buf(f("divergence")), &mut out);
                self.put(f("pressure_out"), out);
            }
            (Kernel::Sor, Params::Jacobi(p)) => {
                let mut out = self.take(f("pressure_out"));
                sor::run(g, &p, dt, self.buf(f("pressure")), self.buf(f("divergence")), &mut out);
                self.put(f("pressure_out"), out);
            }
            (Kernel::Relax, Params::Jacobi(p)) => {
                let mut pressure = self.take(f("pressure"));
                let (mut uo, mut vo) = (self.take(f("u_out")), self.take(f("v_out")));
                let mut scratch = std::mem::take(&mut self.scratch);
                relax::run(
                    g,
                    &p,
                    dt,
                    self.buf(f("u")),
                    self.buf(f("v")),
                    &mut pressure,
                    &mut uo,
                    &mut vo,
                    &mut scratch,
                );
                self.scratch = scratch;
                self.put(f("pressure"), pressure);
                self.put(f("u_out"), uo);
                self.put(f("v_out"), vo);
            }
            (Kernel::PoissonTaps, Params::Taps(p)) => {
                let mut mg = self.take(f("mg"));
                poisson_taps::run(&p, &mut mg);
                self.put(f("mg"), mg);
            }
            (Kernel::PoissonRows, Params::Filter(p)) => {
                let mut mg = self.take(f("mg"));
                poisson_rows::run(g, &p, dt, self.buf(f("pressure")), self.buf(f("divergence")), &mut mg);
                self.put(f("mg"), mg);
            }
            (Kernel::PoissonCols, Params::Filter(p)) => {
                let (mut mg, mut pressure) = (self.take(f("mg")), self.take(f("pressure")));
                poisson_cols::run(g, &p, &mut mg, &mut pressure);
                self.put(f("mg"), mg);
                self.put(f("pressure"), pressure);
            }
            (Kernel::CgInit, Params::Cg(p)) => {
                let mut mg = self.take(f("mg"));
                let (hi, lo, div) = (self.buf(f("pressure")), self.buf(f("pressure_lo")), self.buf(f("divergence")));
                cg_init::run(g, &p, dt, hi, lo, div, &mut mg);
                self.put(f("mg"), mg);
            }
            (Kernel::CgDot, Params::Cg(p)) => {
                let mut mg = self.take(f("mg"));
                cg_dot::run(&p, &mut mg);
                self.put(f("mg"), mg);
            }
            (Kernel::CgDirection, Params::Cg(p)) => {
                let mut mg = self.take(f("mg"));
                cg_direction::run(&p, &mut mg);
                self.put(f("mg"), mg);
            }
            (Kernel::CgApply, Params::Cg(p)) => {
                let mut mg = self.take(f("mg"));
                cg_apply::run(g, &p, &mut mg);
                self.put(f("mg"), mg);
            }
            (Kernel::CgUpdate, Params::Cg(p)) => {
                let mut mg = self.take(f("mg"));
                cg_update::run(&p, &mut mg);
                self.put(f("mg"), mg);
            }
            (Kernel::MgLoad, Params::Mg(p)) => {
                let mut mg = self.take(f("mg"));
                let (mut hi, mut lo) = (self.take(f("pressure")), self.take(f("pressure_lo")));
                mg_load::run(g, &p, dt, &mut hi, &mut lo, self.buf(f("divergence")), &mut mg);
                self.put(f("pressure"), hi);
                self.put(f("pressure_lo"), lo);
                self.put(f("mg"), mg);
            }
            (Kernel::MgSmooth, Params::Mg(p)) => {
                let mut mg = self.take(f("mg"));
                mg_smooth::run(g, &p, &mut mg);
                self.put(f("mg"), mg);
            }
            (Kernel::MgRestrict, Params::Mg(p)) => {
                let mut mg = self.take(f("mg"));
                mg_restrict::run(g, &p, &mut mg);
                self.put(f("mg"), mg);
            }
            (Kernel::MgProlong, Params::Mg(p)) => {
                let mut mg = self.take(f("mg"));
                mg_prolong::run(g, &p, &mut mg);
                self.put(f("mg"), mg);
            }
            (Kernel::MgSmooth2, Params::Mg(p)) => {
                let mut mg = self.take(f("mg"));
                let (mut hi, mut lo) = (self.take(f("pressure")), self.take(f("pressure_lo")));
                let mut scratch = std::mem::take(&mut self.scratch);
                let pressure = mg_smooth2::Pressure { hi: &mut hi, lo: &mut lo, div: self.buf(f("divergence")), dt };
                mg_smooth2::run(g, &p, &mut mg, Some(pressure), &mut scratch);
                self.scratch = scratch;
                self.put(f("pressure"), hi);
                self.put(f("pressure_lo"), lo);
                self.put(f("mg"), mg);
            }
            (Kernel::MgCoarse, Params::Mg(p)) => {
                let mut mg = self.take(f("mg"));
                mg_coarse::run(g, &p, &mut mg);
                self.put(f("mg"), mg);
            }
            (Kernel::MgStore, Params::Mg(p)) => {
                let (mut hi, mut lo) = (self.take(f("pressure")), self.take(f("pressure_lo")));
                mg_store::run(&p, self.buf(f("mg")), &mut hi, &mut lo);
                self.put(f("pressure"), hi);
                self.put(f("pressure_lo"), lo);
            }
            (Kernel::SubtractGradient, Params::None) => {
                let (mut u, mut v) = (self.take(f("u")), self.take(f("v")));
                subtract_gradient::run(g, dt, &mut u, &mut v, self.buf(f("pressure")), self.buf(f("pressure_lo")));
                self.put(f("u"), u);
                self.put(f("v"), v);
            }
            (Kernel::Residual, Params::None) => {
                let mut out = self.take(f("residual"));
                let (hi, lo) = (self.buf(f("pressure")), self.buf(f("pressure_lo")));
                residual::run(g, dt, hi, lo, self.buf(f("divergence")), &mut out);
                self.put(f("residual"), out);
            }
            (kernel, params) => unreachable!("schedule built {} with {params:?}", kernel.name()),
        }
    }

    /// Count one invocation of `entry` started at `start` (`None`: timing is off).
    fn timed(&mut self, entry: &'static str, start: Option<Instant>) {
        if let (Some(t0), Some(timing)) = (start, self.timing.as_mut()) {
            timing.record(entry, t0.elapsed().as_secs_f64() * 1e3);
        }
    }

    fn reduce(&self, g: &G, field: FieldId, op: ReduceOp) -> f64 {
        let data = self.buf(field);
        let cols = g.cols(field.kind());
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

/// The bytes a [`CpuBackend`] on `threads` workers takes for `grid`, and the length of its
/// kernels' scratch: the fields, and the scratch, the larger of two fields of cells (for
/// `apply_forces`; `relax`'s inflows take one) and `mg_smooth2`'s band buffers (about three and a
/// half bands of rows per worker).
fn footprint(grid: &Grid, threads: usize) -> (u64, usize) {
    let (nx, ny) = (grid.nx as usize, grid.ny as usize);
    let scratch_len = (2 * grid.len(FieldId::Density)).max(kernels::mg_smooth2::scratch_len(nx, ny, threads));
    (grid.bytes() + 4 * scratch_len as u64, scratch_len)
}

/// `MemAvailable` of `/proc/meminfo`, where there is one.
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn device(&self) -> String {
        let n = self.threads();
        format!("{n} thread{}, {}", if n == 1 { "" } else { "s" }, simd::short_name())
    }

    fn allocate(&mut self, grid: &Grid) -> Result<()> {
        // Linux overcommits: a reservation larger than memory succeeds and the process is killed
        // later, so compare with what the machine has first.
        let (bytes, scratch_len) = footprint(grid, self.threads());
        if let Some(avail) = available_memory()
            && bytes > avail
        {
            return Err(Error::OutOfMemory {
                nx: grid.nx,
                ny: grid.ny,
                bytes,
                reason: format!("only {avail} bytes of memory are available"),
            });
        }
        self.buffers = Vec::new();
        self.scratch = Vec::new();
        self.scratch.try_reserve_exact(scratch_len).map_err(|e| Error::OutOfMemory {
            nx: grid.nx,
            ny: grid.ny,
            bytes,
            reason: format!("allocating the kernels' scratch failed: {e}"),
        })?;
        self.scratch.resize(scratch_len, 0.0);
        let mut buffers = Vec::with_capacity(FieldId::COUNT);
        for f in FieldId::STATE_AND_SCRATCH {
            let n = grid.len(*f);
            let mut v: Vec<f32> = Vec::new();
            v.try_reserve_exact(n).map_err(|e| Error::OutOfMemory {
                nx: grid.nx,
                ny: grid.ny,
                bytes,
                reason: format!("allocating `{}` failed: {e}", f.name()),
            })?;
            v.resize(n, 0.0);
            buffers.push(v);
        }
        self.buffers = buffers;
        self.map = std::array::from_fn(|i| i);
        self.grid = Some(*grid);
        Ok(())
    }

    fn upload(&mut self, field: FieldId, data: &[f32]) -> Result<()> {
        let grid = self.grid()?;
        if data.len() != grid.len(field) {
            return Err(Error::FieldLength { field: field.name(), expected: grid.len(field), got: data.len() });
        }
        let i = self.map[field.index()];
        self.buffers[i].copy_from_slice(data);
        Ok(())
    }

    fn download(&mut self, field: FieldId) -> Result<Vec<f32>> {
        Ok(self.field_slice(field)?.to_vec())
    }

    fn download_at(&mut self, field: FieldId, indices: &[usize]) -> Result<Vec<f32>> {
        self.grid()?;
        fluid_core::backend::pick(field, self.buf(field), indices)
    }

    fn run(&mut self, schedule: &Schedule, inputs: &StepInputs) -> Result<()> {
        let grid = self.grid()?;
        if schedule.grid != grid.uniform() {
            return Err(Error::Backend { backend: "cpu", message: "the schedule was built for another grid".into() });
        }
        let g = G::new(&schedule.grid);
        let splats: Vec<SplatGpu> = inputs.gpu_splats(&schedule.grid);
        self.reductions = vec![0.0; schedule.reduction_slots()];
        let pool = std::sync::Arc::clone(&self.pool);
        awake(&pool, || {
            for op in &schedule.ops {
                match op {
                    Op::Dispatch(d) => {
                        let start = self.timing.is_some().then(Instant::now);
                        self.dispatch(&g, d, inputs.dt, &splats);
                        self.timed(d.kernel.name(), start);
                    }
                    Op::Swap(a, b) => self.map.swap(a.index(), b.index()),
                    Op::Reduce { field, op, slot } => {
                        let start = self.timing.is_some().then(Instant::now);
                        let r = self.reduce(&g, *field, *op);
                        self.reductions[*slot] = r;
                        self.timed("reduce", start);
                    }
                }
            }
        })
        .ok_or_else(|| Error::Backend { backend: "cpu", message: "the step did not run on the worker pool".into() })
    }

    fn reductions(&mut self) -> Result<Vec<f64>> {
        Ok(self.reductions.clone())
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
        let timing = self.timing.as_mut().ok_or_else(|| Error::Backend {
            backend: "cpu",
            message: "timings were not enabled (call set_timing(true) first)".into(),
        })?;
        Ok(timing.take())
    }
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

    /// What `allocate` checks against the machine's memory: every field, and the kernels'
    /// scratch, here `mg_smooth2`'s: one band of the whole 80 rows (8000 cells is one band),
    /// three arrays of its rows and a halo of 5 on each side, and two residual rows, 100 wide.
    /// With 64 workers on a wide grid, the bands of the finest level, two rows each.
    #[test]
    fn the_footprint_is_the_fields_and_the_scratch() {
        use fluid_core::{Boundary, Grid};
        let grid = Grid::new(100, 80, 0.1, Boundary::Wall, Boundary::Periodic).expect("grid");
        let scratch = 100 * (3 * (80 + 2 * 5) + 2);
        assert_eq!(super::footprint(&grid, 2), (grid.bytes() + 4 * scratch as u64, scratch));
        let wide = Grid::new(4000, 8, 0.1, Boundary::Wall, Boundary::Wall).expect("grid");
        let bands = crate::kernels::mg_smooth2::scratch_len(4000, 8, 64);
        assert!(bands >= 2 * 4000 * 8, "at least two fields of cells: {bands}");
        assert_eq!(super::footprint(&wide, 64), (wide.bytes() + 4 * bands as u64, bands));
    }

    #[test]
    fn the_device_names_its_thread_count() {
        use fluid_core::Backend;
        let one = super::CpuBackend::with_threads(1).expect("one thread").device();
        let two = super::CpuBackend::with_threads(2).expect("two threads").device();
        assert!(one.starts_with("1 thread, ") && two.starts_with("2 threads, "), "{one} / {two}");
    }

    /// `field_slice` is the field as it is now: what `download` copies, after steps that
    /// ping-pong the buffers too; before `allocate` it is an error.
    #[test]
    fn field_slice_borrows_what_download_copies() {
        use fluid_core::{Backend, Boundary, Error, FieldId, Grid, Schedule, SimParams, Splat, StepInputs};
        let mut b = super::CpuBackend::with_threads(2).expect("backend");
        assert!(matches!(b.field_slice(FieldId::Density), Err(Error::NotAllocated("cpu"))));
        let grid = Grid::new(24, 17, 1.0, Boundary::Wall, Boundary::Periodic).expect("grid");
        b.allocate(&grid).expect("allocate");
        let step = Schedule::step(&grid, &SimParams { viscosity: 0.01, ..SimParams::default() });
        let splat = Splat { center: [12.0, 6.0], radius: 3.0, velocity: [1.0, 2.0], density: 1.0, ..Splat::default() };
        for k in 0..5 {
            b.run(&step, &StepInputs { dt: 0.1, time: 0.1 * k as f32, step: k, splats: vec![splat] }).expect("step");
            for field in [FieldId::U, FieldId::V, FieldId::Density, FieldId::Pressure] {
                let copy = b.download(field).expect("download");
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
