//! Parity with the CPU backend, generic over the backend under test: every kernel on random
//! non-zero inputs, and every preset over several steps.
//!
//! Set `FLUID_CONFORMANCE_REPORT=1` to print every measured difference.
//!
//! A failing comparison writes the CPU field, the other backend's field and their difference as
//! PNG under `target/conformance/` before it panics, so a person can look.

use std::path::PathBuf;

use fluid::{Backend, Boundary, CpuBackend, FieldId, Grid, GridFields, Scene, Simulation, Splat, StepInputs};
use fluid_core::grid::kernels;
use fluid_core::grid::pressure::multigrid::{LOAD_COPY, LOAD_RESIDUAL, STORE_ADD, STORE_COPY, STORE_PAIR};
use fluid_core::grid::step::{self, STATE_FIELDS};
use fluid_core::grid::uniforms::{
    ADVECT_DENSITY, ADVECT_DYE, ADVECT_TEMPERATURE, AdvectParams, CgParams, DiffuseParams, FilterParams, ForceParams,
    JacobiParams, MULTISWEEP_MAX, MgParams, TapsParams,
};
use fluid_core::ir::kernel::Access;
use fluid_core::ir::schedule::ParamBlock;
use fluid_core::scene::SplitMix64;
use fluid_core::{Kernel, ResourceId, Schedule};

/// How close another backend must come to the CPU backend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Largest |difference|, relative to the largest |value| of the CPU field.
    pub max_abs: f64,
    /// ‖difference‖₂ / ‖CPU field‖₂.
    pub rel_l2: f64,
}

/// The tolerance of each kernel against the CPU backend, and why.
///
/// - Pure stencil arithmetic in the same order as the CPU (`divergence`, `jacobi`,
///   `subtract_gradient`, `residual`, `curl`, `diffuse_velocity`): 1e-6 relative L2 and 1e-5
///   max-abs — a GPU may fuse a multiply-add (one rounding instead of two), nothing else.
/// - `apply_forces`: adds a division and a square root per cell (vorticity normal): 1e-5 / 1e-4.
/// - `splat`: `exp` and `sqrt` differ by a few ulp between libm and GPU hardware: 1e-5 / 1e-4.
/// - `advect_velocity`, `advect_cells`: three RK stages each feed a sampling position; a
///   one-ulp position difference moves the bilinear weights by ~1e-7 of a cell times the local
///   gradient, and `exp` of the dissipation differs by ulps: 1e-5 relative L2, 1e-4 max-abs.
pub fn tolerance(kernel: Kernel) -> Tolerance {
    match kernel {
        kernels::ADVECT_VELOCITY | kernels::ADVECT_CELLS | kernels::SPLAT | kernels::APPLY_FORCES => {
            Tolerance { max_abs: 1e-4, rel_l2: 1e-5 }
        }
        // Sums of up to ~10^3 products of values in [-1, 1] in the GPU's order (which may fuse
        // multiply-adds): f32 rounding of the sums, ~1e-7 of their size.
        kernels::CG_DOT => Tolerance { max_abs: 1e-3, rel_l2: 1e-6 },
        // Up to 4 x 25 products of random values (the parity test's taps are random too).
        kernels::POISSON_ROWS | kernels::POISSON_COLS => Tolerance { max_abs: 1e-4, rel_l2: 1e-6 },
        // The rest (curl, diffusion, divergence, the sweeps, the multigrid and MGPCG kernels,
        // the taps, the gradient subtraction, the residual) is stencil arithmetic.
        _ => Tolerance { max_abs: 1e-5, rel_l2: 1e-6 },
    }
}

/// Whole presets after [`PRESET_STEPS`] steps: 1e-4 relative L2 and 1e-3 max-abs per field.
/// Per-kernel differences of 1e-6..1e-5 compound over the steps (advection feeds on its own
/// output), and vorticity confinement amplifies small differences; 20 steps keep that growth
/// well inside these bounds while a wrong kernel misses them by orders of magnitude.
pub const PRESET_TOLERANCE: Tolerance = Tolerance { max_abs: 1e-3, rel_l2: 1e-4 };

/// Steps of the preset parity runs.
pub const PRESET_STEPS: u32 = 20;

/// Reductions (f32 on the GPU, f64 per row on the CPU): 1e-4 relative.
pub const REDUCTION_TOLERANCE: f64 = 1e-4;

/// Differences between two fields.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Difference {
    /// Largest |a − b| / max |a|.
    pub max_abs: f64,
    /// ‖a − b‖ / ‖a‖.
    pub rel_l2: f64,
}

/// Compare `b` against the reference `a`.
pub fn difference(a: &[f32], b: &[f32]) -> Difference {
    let wide = |v: &[f32]| -> Vec<f64> { v.iter().map(|x| f64::from(*x)).collect() };
    difference_f64(&wide(a), &wide(b))
}

/// [`difference`] of values held in f64 (double-float sums).
pub fn difference_f64(a: &[f64], b: &[f64]) -> Difference {
    assert_eq!(a.len(), b.len());
    let (mut d2, mut a2, mut dmax, mut amax) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (*x, *y);
        let d = if x.is_finite() && y.is_finite() { (x - y).abs() } else { f64::INFINITY };
        d2 += d * d;
        a2 += x * x;
        dmax = dmax.max(d);
        amax = amax.max(x.abs());
    }
    let scale = |n: f64, d: f64| {
        if d > 0.0 {
            n / d
        } else if n > 0.0 {
            f64::INFINITY
        } else {
            0.0
        }
    };
    Difference { max_abs: scale(dmax, amax), rel_l2: scale(d2.sqrt(), a2.sqrt()) }
}

fn conformance_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("target"));
    target.join("conformance")
}

/// A field as an RGB picture, +y up; dye shows its four channels side by side.
fn picture(grid: &Grid, field: FieldId, data: &[f32], scale: f32) -> (u32, u32, Vec<u8>) {
    let shape = grid.shape(field);
    let (rows, cols) = (shape[0], shape.iter().skip(1).product::<usize>());
    let mut px = Vec::with_capacity(rows * cols * 3);
    for r in (0..rows).rev() {
        for c in 0..cols {
            let x = data[r * cols + c] / scale;
            // Diverging: blue for negative, red for positive, black at zero.
            let t = x.clamp(-1.0, 1.0);
            let (red, blue) = if t >= 0.0 { (t, 0.0) } else { (0.0, -t) };
            px.extend_from_slice(&[(red * 255.0) as u8, (0.25 * (1.0 - t.abs()) * 255.0) as u8, (blue * 255.0) as u8]);
        }
    }
    (cols as u32, rows as u32, px)
}

fn write_failure_pictures(name: &str, grid: &Grid, field: FieldId, cpu: &[f32], other: &[f32]) -> String {
    let dir = conformance_dir();
    if std::fs::create_dir_all(&dir).is_err() {
        return "(could not create target/conformance)".into();
    }
    let scale = cpu.iter().fold(1e-30f32, |m, x| m.max(x.abs()));
    let diff: Vec<f32> = cpu.iter().zip(other).map(|(a, b)| b - a).collect();
    let dscale = diff.iter().fold(1e-30f32, |m, x| m.max(x.abs()));
    let mut written = Vec::new();
    for (suffix, data, s) in [("cpu", cpu, scale), ("other", other, scale), ("diff", &diff[..], dscale)] {
        let (w, h, px) = picture(grid, field, data, s);
        let path = dir.join(format!("{name}-{}-{suffix}.png", field.name()));
        if image::save_buffer(&path, &px, w, h, image::ExtendedColorType::Rgb8).is_ok() {
            written.push(path.display().to_string());
        }
    }
    written.join(", ")
}

fn check(name: &str, grid: &Grid, field: FieldId, cpu: &[f32], other: &[f32], tol: Tolerance) {
    let d = difference(cpu, other);
    if std::env::var_os("FLUID_CONFORMANCE_REPORT").is_some() {
        eprintln!("conformance {name} {}: max-abs {:.2e} rel-L2 {:.2e}", field.name(), d.max_abs, d.rel_l2);
    }
    if d.max_abs <= tol.max_abs && d.rel_l2 <= tol.rel_l2 {
        return;
    }
    let pictures = write_failure_pictures(name, grid, field, cpu, other);
    panic!(
        "{name}: field `{}` differs from the CPU backend: max-abs {:.3e} (tolerance {:.0e}), relative L2 {:.3e} \
         (tolerance {:.0e}); pictures: {pictures}",
        field.name(),
        d.max_abs,
        tol.max_abs,
        d.rel_l2,
        tol.rel_l2
    );
}

/// The double-float pressure `pressure + pressure_lo` against the CPU's (no pictures: the
/// `pressure` check before it draws them).
fn check_f64(name: &str, cpu: &[f64], other: &[f64], tol: Tolerance) {
    let d = difference_f64(cpu, other);
    assert!(
        d.max_abs <= tol.max_abs && d.rel_l2 <= tol.rel_l2,
        "{name}: pressure + pressure_lo differs from the CPU backend: max-abs {:.3e} (tolerance {:.0e}), relative \
         L2 {:.3e} (tolerance {:.0e})",
        d.max_abs,
        tol.max_abs,
        d.rel_l2,
        tol.rel_l2
    );
}

/// The spacing of f32 values at `x`.
fn ulp(x: f32) -> f32 {
    let a = x.abs();
    if a.is_finite() { a.next_up() - a } else { f32::INFINITY }
}

fn random_field(grid: &Grid, field: FieldId, rng: &mut SplitMix64) -> Vec<f32> {
    let (lo, hi) = match field {
        FieldId::U | FieldId::V | FieldId::UTmp | FieldId::VTmp | FieldId::UTmp2 | FieldId::VTmp2 => (-2.0, 2.0),
        FieldId::Solid => (0.0, 0.0),
        _ => (0.05, 1.0),
    };
    (0..grid.len(field)).map(|_| lo + (hi - lo) * rng.next_f32()).collect()
}

fn random_splats(grid: &Grid, rng: &mut SplitMix64) -> Vec<Splat> {
    (0..3)
        .map(|k| Splat {
            center: [rng.next_f32() * grid.width(), rng.next_f32() * grid.height()],
            radius: (0.15 + 0.2 * rng.next_f32()) * grid.height(),
            falloff: if k % 2 == 0 { fluid::Falloff::Gaussian } else { fluid::Falloff::Linear },
            velocity: [4.0 * rng.next_f32() - 2.0, 4.0 * rng.next_f32() - 2.0],
            density: rng.next_f32(),
            temperature: 2.0 * rng.next_f32(),
            dye: [rng.next_f32(), rng.next_f32(), rng.next_f32(), rng.next_f32()],
        })
        .collect()
}

/// Single-dispatch schedules that exercise `kernel` with non-trivial parameters.
fn kernel_schedules(grid: &Grid, kernel: Kernel) -> Vec<Schedule> {
    use FieldId::*;
    let faces = [grid.nx + 1, grid.ny + 1];
    let whole_grid = if kernel.domain == fluid_core::ir::kernel::Domain::Faces { faces } else { [grid.nx, grid.ny] };
    let one = |fields: &[FieldId], params: Option<ParamBlock>| single(grid, kernel, fields, params, whole_grid);
    // The multigrid kernels run over one level of the hierarchy of this grid.
    let levels = fluid_core::grid::pressure::multigrid::levels(grid.nx, grid.ny);
    let mg = |fields: &[FieldId], p: MgParams, over: &fluid_core::grid::pressure::multigrid::Level| {
        single(grid, kernel, fields, Some(ParamBlock::new(&p)), [over.nx, over.ny])
    };
    let on = fluid_core::grid::pressure::multigrid::Level::params;
    let transfer = |f: &fluid_core::grid::pressure::multigrid::Level,
                    c: &fluid_core::grid::pressure::multigrid::Level| f.transfer(c);
    let advect = |order: u32| AdvectParams {
        order,
        fields: ADVECT_DENSITY | ADVECT_TEMPERATURE | ADVECT_DYE,
        velocity_dissipation: 0.3,
        density_dissipation: 0.2,
        temperature_dissipation: 0.7,
        dye_dissipation: 0.1,
        ambient_temperature: 0.4,
        _pad: 0,
    };
    match kernel {
        kernels::ADVECT_VELOCITY => {
            (1..=3).map(|o| one(&[U, V, UTmp, VTmp], Some(ParamBlock::new(&advect(o))))).collect()
        }
        kernels::ADVECT_CELLS => (1..=3)
            .map(|o| {
                one(
                    &[U, V, Density, Temperature, Dye, DensityTmp, TemperatureTmp, DyeTmp],
                    Some(ParamBlock::new(&advect(o))),
                )
            })
            .collect(),
        kernels::SPLAT => vec![one(&[U, V, Density, Temperature, Dye], None)],
        kernels::CURL => vec![one(&[U, V, Curl], None)],
        kernels::APPLY_FORCES => {
            let p = ForceParams {
                gravity: [0.3, -0.8],
                density_weight: 0.7,
                temperature_lift: 1.3,
                ambient_temperature: 0.2,
                vorticity: 2.5,
                max_speed: 1.5,
                clamp_speed: 1,
            };
            vec![one(&[U, V, Density, Temperature, Curl], Some(ParamBlock::new(&p)))]
        }
        kernels::DIFFUSE_VELOCITY => {
            let p = DiffuseParams { viscosity: 0.05, _pad: [0; 3] };
            vec![one(&[U, V, UTmp, VTmp, UTmp2, VTmp2], Some(ParamBlock::new(&p)))]
        }
        kernels::DIVERGENCE => vec![one(&[U, V, Divergence], None)],
        kernels::JACOBI => [0u32, 1]
            .iter()
            .map(|&z| {
                let p = JacobiParams { omega: 0.8, zero_initial: z, colour: 0, sweeps: 1 };
                one(&[Pressure, Divergence, PressureTmp], Some(ParamBlock::new(&p)))
            })
            .collect(),
        // The full halo cold and warm, a partial one, and a single sweep.
        kernels::JACOBI_MULTISWEEP => [(0u32, MULTISWEEP_MAX), (1, MULTISWEEP_MAX), (0, 3), (1, 1)]
            .iter()
            .map(|&(z, sweeps)| {
                let p = JacobiParams { omega: 0.8, zero_initial: z, colour: 0, sweeps };
                one(&[Pressure, Divergence, PressureTmp], Some(ParamBlock::new(&p)))
            })
            .collect(),
        kernels::SOR => [(0u32, 0u32), (0, 1), (1, 0)]
            .iter()
            .map(|&(z, colour)| {
                let p = JacobiParams { omega: 1.7, zero_initial: z, colour, sweeps: 1 };
                one(&[Pressure, Divergence, PressureTmp], Some(ParamBlock::new(&p)))
            })
            .collect(),
        kernels::RELAX => [(0u32, 1.0f32), (1, 1.3)]
            .iter()
            .map(|&(z, omega)| {
                let p = JacobiParams { omega, zero_initial: z, colour: 0, sweeps: 1 };
                one(&[U, V, Pressure, UTmp, VTmp], Some(ParamBlock::new(&p)))
            })
            .collect(),
        kernels::CG_INIT | kernels::CG_DOT | kernels::CG_DIRECTION | kernels::CG_APPLY | kernels::CG_UPDATE => {
            let top = levels[0];
            let base = fluid_core::grid::pressure::mgpcg::cg_params(grid.nx, grid.ny);
            let count = base.count;
            let cg = |fields: &[FieldId], p: CgParams, extent: [u32; 2]| {
                single(grid, kernel, fields, Some(ParamBlock::new(&p)), extent)
            };
            let whole = [top.nx, top.ny];
            match kernel {
                kernels::CG_INIT => (0..2)
                    .map(|flag| cg(&[Pressure, PressureLo, Divergence, Multigrid], CgParams { flag, ..base }, whole))
                    .collect(),
                kernels::CG_DOT => vec![
                    cg(&[Multigrid], CgParams { flag: 0, ..base }, [count * 256, 1]),
                    cg(&[Multigrid], CgParams { flag: 1, slot: 2, ..base }, [256, 1]),
                ],
                // Scalars are random, so of the two slots one restarts (r·z did not fall) and
                // the other does not.
                kernels::CG_DIRECTION => [(0, 0), (1, 0), (0, 1)]
                    .iter()
                    .map(|&(flag, slot)| cg(&[Multigrid], CgParams { flag, slot, ..base }, whole))
                    .collect(),
                kernels::CG_APPLY => vec![cg(&[Multigrid], base, whole)],
                _ => (0..2).map(|slot| cg(&[Multigrid], CgParams { slot, ..base }, whole)).collect(),
            }
        }
        kernels::POISSON_TAPS => {
            let taps = [0.5, -1.0, 2.0, 0.25, 3.0, -0.75, 1.5, 0.125];
            [(fluid_core::grid::pressure::poisson_filter::TAPS_LEN - 8, 8), (5, 3)]
                .iter()
                .map(|&(offset, count)| {
                    let p = TapsParams { offset, count, _pad: [0; 2], taps };
                    single(grid, kernel, &[Multigrid], Some(ParamBlock::new(&p)), [1, 1])
                })
                .collect()
        }
        kernels::POISSON_ROWS | kernels::POISSON_COLS => {
            let cells = grid.nx * grid.ny;
            let (bank, tmp) = (0, fluid_core::grid::pressure::poisson_filter::TMP);
            let modes: &[u32] = if kernel == kernels::POISSON_ROWS { &[0, 1] } else { &[0, 1, 2] };
            modes
                .iter()
                .flat_map(|&mode| [(3u32, 2u32), (12, 4)].map(|(k, rank)| (mode, k, rank)))
                .map(|(mode, k, rank)| {
                    let p = FilterParams { rank, k, bank, tmp, q: tmp + rank * cells, mode, _pad: [0; 2] };
                    if kernel == kernels::POISSON_ROWS {
                        one(&[Pressure, Divergence, Multigrid], Some(ParamBlock::new(&p)))
                    } else {
                        one(&[Multigrid, Pressure], Some(ParamBlock::new(&p)))
                    }
                })
                .collect()
        }
        // Both modes, warm and cold.
        kernels::MG_LOAD => [(LOAD_COPY, 0), (LOAD_COPY, 1), (LOAD_RESIDUAL, 0), (LOAD_RESIDUAL, 1)]
            .iter()
            .map(|&(colour, zero_initial)| {
                let p = MgParams { colour, zero_initial, ..on(&levels[0]) };
                mg(&[Pressure, PressureLo, Divergence, Multigrid], p, &levels[0])
            })
            .collect(),
        kernels::MG_SMOOTH => levels
            .iter()
            .take(2)
            .flat_map(|l| [(0, 1.0), (1, 1.0), (0, 1.3)].map(|(colour, omega)| (l, colour, omega)))
            .map(|(l, colour, omega)| mg(&[Multigrid], MgParams { colour, omega, ..on(l) }, l))
            .collect(),
        // Both colour orders, from zero or not, over-relaxed, on the first two levels; with the
        // coarse correction added first (the post-smoothing of a V-cycle).
        kernels::MG_SMOOTH2 => {
            let mut out: Vec<Schedule> = levels
                .iter()
                .take(2)
                .flat_map(|l| [(0, 0, 1.0), (1, 0, 1.15), (0, 1, 1.15)].map(|(colour, z, omega)| (l, colour, z, omega)))
                .map(|(l, colour, zero_initial, omega)| {
                    mg(
                        &[Multigrid, Pressure, PressureLo, Divergence],
                        MgParams { colour, zero_initial, omega, ..on(l) },
                        l,
                    )
                })
                .collect();
            for w in levels.windows(2).take(2) {
                let p = MgParams { p: w[0].tmp, tmp: w[0].p, colour: 1, omega: 1.15, ..transfer(&w[0], &w[1]) };
                out.push(mg(&[Multigrid, Pressure, PressureLo, Divergence], p, &w[0]));
                // And with the restriction afterwards (the pre-smoothing of a V-cycle), both
                // colour orders, from zero or not.
                use fluid_core::grid::pressure::multigrid::SMOOTH2_RESTRICT;
                for (colour, zero_initial) in [(SMOOTH2_RESTRICT, 1), (SMOOTH2_RESTRICT | 1, 0)] {
                    let p = MgParams { colour, zero_initial, omega: 1.15, ..transfer(&w[0], &w[1]) };
                    out.push(mg(&[Multigrid, Pressure, PressureLo, Divergence], p, &w[0]));
                }
            }
            // Level 0's post-smoothing of a double-float solve, the result added to the pressure,
            // and its pre-smoothing, b computed from the pressure first.
            use fluid_core::grid::pressure::multigrid::{SMOOTH2_ACCUMULATE, SMOOTH2_LOAD_RESIDUAL, SMOOTH2_RESTRICT};
            if let [l0, l1, ..] = levels[..] {
                let colour = SMOOTH2_ACCUMULATE | 1;
                let p = MgParams { p: l0.tmp, tmp: l0.p, colour, omega: 1.15, ..transfer(&l0, &l1) };
                out.push(mg(&[Multigrid, Pressure, PressureLo, Divergence], p, &l0));
                let colour = SMOOTH2_LOAD_RESIDUAL | SMOOTH2_RESTRICT;
                let p = MgParams { colour, zero_initial: 1, omega: 1.15, ..transfer(&l0, &l1) };
                out.push(mg(&[Multigrid, Pressure, PressureLo, Divergence], p, &l0));
            }
            out
        }
        kernels::MG_RESTRICT => {
            levels.windows(2).take(2).map(|w| mg(&[Multigrid], transfer(&w[0], &w[1]), &w[1])).collect()
        }
        kernels::MG_PROLONG => {
            levels.windows(2).take(2).map(|w| mg(&[Multigrid], transfer(&w[0], &w[1]), &w[0])).collect()
        }
        // The cycle from the first two levels that fit in its workgroup memory (level 0 of most
        // test grids): plain, symmetric, and from zero.
        kernels::MG_COARSE => levels
            .iter()
            .filter(|l| fluid_core::grid::pressure::multigrid::fits_coarse(l))
            .take(2)
            .flat_map(|l| [(0, 0), (1, 0), (0, 1)].map(|(colour, zero_initial)| (l, colour, zero_initial)))
            .map(|(l, colour, zero_initial)| {
                let p = MgParams { colour, zero_initial, omega: 1.15, ..on(l) };
                let threads = fluid_core::grid::pressure::multigrid::COARSE_THREADS;
                single(grid, kernel, &[Multigrid], Some(ParamBlock::new(&p)), [threads, 1])
            })
            .collect(),
        // Every mode; the pair and the sum from MGPCG's x (its low part follows it).
        kernels::MG_STORE => {
            let x = fluid_core::grid::pressure::mgpcg::cg_layout(grid.nx, grid.ny).x;
            [STORE_COPY, STORE_PAIR, STORE_ADD]
                .iter()
                .map(|&colour| {
                    let p = MgParams { colour, p: x, ..on(&levels[0]) };
                    mg(&[Multigrid, Pressure, PressureLo], p, &levels[0])
                })
                .collect()
        }
        kernels::SUBTRACT_GRADIENT => vec![one(&[U, V, Pressure, PressureLo], None)],
        kernels::RESIDUAL => vec![one(&[Pressure, PressureLo, Divergence, Scratch], None)],
        other => panic!("no parity schedules for kernel {}", other.name),
    }
}

/// `s` without the amounts for the fields `sim`'s scene does not carry (which it refuses).
pub(crate) fn carried<B: Backend>(sim: &Simulation<B>, s: Splat) -> Splat {
    s.only_carried(&sim.scene().params.fields)
}

/// A schedule of one dispatch of `kernel` over `extent` invocations.
pub(crate) fn single(
    grid: &Grid,
    kernel: Kernel,
    fields: &[FieldId],
    params: Option<ParamBlock>,
    extent: [u32; 2],
) -> Schedule {
    let mut b = Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]);
    let ids: Vec<ResourceId> = fields.iter().map(|f| (*f).into()).collect();
    b.dispatch(kernel, &ids, params, extent);
    b.build()
}

/// Allocate every field of `grid` on `b` and upload `fields`.
pub(crate) fn load<B: Backend>(b: &mut B, grid: &Grid, fields: &[(FieldId, Vec<f32>)]) {
    b.allocate(GridFields::all(grid).resources()).expect("allocate");
    for (f, data) in fields {
        b.upload((*f).into(), data).expect("upload");
    }
}

/// Run `kernel` once on random non-zero inputs, on odd non-square grids with walls, periodic
/// and mixed boundaries (and one tiny periodic grid), and compare every field it writes with
/// the CPU backend.
pub fn kernel_parity<B: Backend>(make: impl Fn() -> B, kernel: Kernel) {
    // Odd, non-square grids; one smaller than a GPU workgroup that wraps more than once.
    let cases = [
        (37, 23, Boundary::Wall, Boundary::Wall),
        (37, 23, Boundary::Periodic, Boundary::Periodic),
        (37, 23, Boundary::Periodic, Boundary::Wall),
        (5, 3, Boundary::Periodic, Boundary::Periodic),
        // Large enough for interior GPU tiles (fast paths that skip boundary checks).
        (71, 53, Boundary::Wall, Boundary::Wall),
    ];
    for (case, (nx, ny, bx, by)) in cases.into_iter().enumerate() {
        let grid = Grid::new(nx, ny, 0.1, bx, by).expect("grid");
        let mut rng = SplitMix64(1000 + case as u64);
        let mut fields: Vec<(FieldId, Vec<f32>)> =
            FieldId::STATE_AND_SCRATCH.iter().map(|f| (*f, random_field(&grid, *f, &mut rng))).collect();
        // A double-float pressure's low part lies within half an ulp of its high part.
        let hi = fields.iter().find(|(f, _)| *f == FieldId::Pressure).map(|(_, v)| v.clone()).expect("pressure");
        if let Some((_, lo)) = fields.iter_mut().find(|(f, _)| *f == FieldId::PressureLo) {
            for (l, h) in lo.iter_mut().zip(&hi) {
                *l = (rng.next_f32() - 0.5) * 0.9 * ulp(*h);
            }
        }
        let inputs = StepInputs { dt: 0.05, time: 0.0, step: 0, splats: random_splats(&grid, &mut rng) };
        for (k, schedule) in kernel_schedules(&grid, kernel).iter().enumerate() {
            let mut cpu = CpuBackend::new().expect("cpu backend");
            let mut other = make();
            load(&mut cpu, &grid, &fields);
            load(&mut other, &grid, &fields);
            cpu.run(schedule, &inputs).expect("cpu run");
            other.run(schedule, &inputs).expect("run");
            let d = schedule.dispatches().next().expect("dispatch");
            for (slot, id) in kernel.bindings.iter().zip(&d.resources) {
                if slot.access == Access::Read {
                    continue;
                }
                let field = &FieldId::from_resource(*id).expect("a grid field");
                let a = cpu.download(*id).expect("cpu download");
                let b = other.download(*id).expect("download");
                let name = format!("{}-{nx}x{ny}-{:?}-{:?}-{k}", kernel.name, bx, by).to_lowercase();
                if *field == FieldId::PressureLo {
                    // The low part alone is rounding noise of the high part (one ulp of
                    // difference in the high part changes it entirely): check that it stays
                    // below half an ulp of the high part, and compare the sums.
                    let (hi_a, hi_b) = (
                        cpu.download(FieldId::Pressure.into()).expect("cpu"),
                        other.download(FieldId::Pressure.into()).expect("other"),
                    );
                    for c in 0..b.len() {
                        let normal = |h: f32, l: f32| l.abs() <= 0.5 * ulp(h);
                        assert!(
                            !normal(hi_a[c], a[c]) || normal(hi_b[c], b[c]),
                            "{name}: cell {c}: pressure_lo {:e} beyond half an ulp of {:e} (CPU: {:e}, {:e})",
                            b[c],
                            hi_b[c],
                            hi_a[c],
                            a[c]
                        );
                    }
                    let sum = |h: &[f32], l: &[f32]| -> Vec<f64> {
                        h.iter().zip(l).map(|(h, l)| f64::from(*h) + f64::from(*l)).collect()
                    };
                    check_f64(&name, &sum(&hi_a, &a), &sum(&hi_b, &b), tolerance(kernel));
                    continue;
                }
                check(&name, &grid, *field, &a, &b, tolerance(kernel));
            }
        }
    }
}

/// Subtract the mean (in f64) from every value.
fn remove_mean(x: &mut [f32]) {
    let mean = x.iter().map(|&v| f64::from(v)).sum::<f64>() / x.len().max(1) as f64;
    for v in x {
        *v = (f64::from(*v) - mean) as f32;
    }
}

/// The diagnostics reductions (max |div|, ‖residual‖², ‖b‖²) on random fields, from a grid of
/// one partial result per field to one whose dye has more values than the partials' cap
/// (`REDUCE_MAX_PARTIALS` of 1024 values each).
pub fn reduction_parity<B: Backend>(make: impl Fn() -> B) {
    let sizes = [(37u32, 23u32), (300, 211), (520, 509)];
    let (nx, ny) = sizes[sizes.len() - 1];
    assert!(4 * nx * ny > 1024 * fluid_core::ir::uniforms::REDUCE_MAX_PARTIALS, "no grid reaches the partials' cap");
    for (nx, ny) in sizes {
        let grid = Grid::new(nx, ny, 0.1, Boundary::Wall, Boundary::Wall).expect("grid");
        let mut rng = SplitMix64(77);
        let fields: Vec<(FieldId, Vec<f32>)> =
            FieldId::STATE_AND_SCRATCH.iter().map(|f| (*f, random_field(&grid, *f, &mut rng))).collect();
        let inputs = StepInputs { dt: 0.05, ..StepInputs::default() };
        let schedule = step::diagnostics(&grid);
        let mut cpu = CpuBackend::new().expect("cpu backend");
        let mut other = make();
        load(&mut cpu, &grid, &fields);
        load(&mut other, &grid, &fields);
        cpu.run(&schedule, &inputs).expect("cpu run");
        other.run(&schedule, &inputs).expect("run");
        let a = cpu.reductions().expect("cpu reductions");
        let b = other.reductions().expect("reductions");
        assert_eq!(a.len(), b.len());
        for (slot, (x, y)) in a.iter().zip(&b).enumerate() {
            let rel = (x - y).abs() / x.abs().max(1e-30);
            assert!(
                rel < REDUCTION_TOLERANCE,
                "{nx}x{ny}: reduction slot {slot}: cpu {x:.6e}, other {y:.6e} ({rel:.2e})"
            );
        }
    }
}

/// The max |x| reductions never skip a non-finite value: a field with a NaN reduces to NaN,
/// one with an infinity (and no NaN) to +inf, wherever they lie (first, middle or last value,
/// so in the first or last chunk of a GPU's partial sums), and the finite fields stay exact.
pub fn reduction_non_finite<B: Backend>(make: impl Fn() -> B) {
    use fluid_core::grid::step::SLOT_STATE_MAX;
    let grid = Grid::new(300, 211, 0.1, Boundary::Wall, Boundary::Wall).expect("grid");
    let mut rng = SplitMix64(78);
    let mut fields: Vec<(FieldId, Vec<f32>)> =
        FieldId::STATE_AND_SCRATCH.iter().map(|f| (*f, random_field(&grid, *f, &mut rng))).collect();
    // Which value of which field goes bad (`at` of the field's length), and the slot's
    // expected result (None: NaN).
    struct Bad {
        field: FieldId,
        at: fn(usize) -> usize,
        value: f32,
        want: Option<f64>,
    }
    let bad = [
        Bad { field: FieldId::U, at: |n| n - 1, value: f32::NAN, want: None },
        Bad { field: FieldId::V, at: |_| 0, value: f32::NEG_INFINITY, want: Some(f64::INFINITY) },
        Bad { field: FieldId::Density, at: |n| n / 2, value: f32::INFINITY, want: Some(f64::INFINITY) },
        Bad { field: FieldId::Temperature, at: |n| n / 3, value: -f32::NAN, want: None },
        Bad { field: FieldId::Dye, at: |n| n - 5, value: f32::NAN, want: None },
    ];
    for b in &bad {
        let data = &mut fields.iter_mut().find(|(f, _)| *f == b.field).expect("field").1;
        let n = data.len();
        data[(b.at)(n)] = b.value;
        if b.field == FieldId::Dye {
            data[n / 7] = f32::INFINITY; // NaN wins over an infinity
        }
    }
    let mut b = make();
    load(&mut b, &grid, &fields);
    b.run(&step::diagnostics(&grid), &StepInputs { dt: 0.05, ..StepInputs::default() }).expect("run");
    let r = b.reductions().expect("reductions");
    for (k, field) in STATE_FIELDS.iter().enumerate() {
        let got = r[SLOT_STATE_MAX + k];
        match bad.iter().find(|b| b.field == *field).map(|b| b.want) {
            Some(None) => assert!(got.is_nan(), "max |{}| = {got}, expected NaN", field.name()),
            Some(Some(want)) => assert_eq!(got, want, "max |{}|", field.name()),
            None => {
                let data = &fields.iter().find(|(f, _)| f == field).expect("field").1;
                let want = data.iter().fold(0.0f32, |m, x| m.max(x.abs()));
                assert_eq!(got, f64::from(want), "max |{}| of a finite field", field.name());
            }
        }
    }
}

/// A preset on the small odd grid (45 × 38) the whole-step checks run on.
pub fn small_preset(preset: &str) -> Scene {
    small_preset_with(preset, &[])
}

/// [`small_preset`] with more overrides.
pub fn small_preset_with(preset: &str, extra: &[&str]) -> Scene {
    let ov: Vec<_> =
        ["grid.nx=45", "grid.ny=38"].iter().chain(extra).map(|s| fluid::parse_override(s).expect("override")).collect();
    Scene::preset_with(preset, &ov).expect("preset")
}

/// How many values of `a` and `b` differ in their bits.
pub fn bits_differ(a: &[f32], b: &[f32]) -> usize {
    a.iter().zip(b).filter(|(p, q)| p.to_bits() != q.to_bits()).count()
}

/// The [`STATE_FIELDS`] after `steps` steps of the small `preset` ([`small_preset`]) on
/// `backend`, with a splat before every third step.
pub fn steps_with_splats<B: Backend>(preset: &str, backend: B, steps: usize) -> Vec<Vec<f32>> {
    let scene = small_preset(preset);
    let dt = scene.params.dt;
    let mut sim = Simulation::new(scene, backend).expect("simulation");
    for k in 0..steps {
        if k % 3 == 0 {
            let x = 0.3 + 0.05 * k as f32;
            let s = Splat { center: [x, 0.4], radius: 0.1, velocity: [0.5, 0.2], density: 1.0, ..Splat::default() };
            sim.splat(carried(&sim, s)).expect("splat");
        }
        sim.step(dt).expect("step");
    }
    read_state(&mut sim)
}

/// The [`STATE_FIELDS`] of `sim` now, each empty where its scene does not carry it.
pub fn read_state<B: Backend>(sim: &mut Simulation<B>) -> Vec<Vec<f32>> {
    let fields = sim.scene().params.fields;
    STATE_FIELDS.iter().map(|&f| if fields.carries(f) { sim.field(f).expect("field") } else { Vec::new() }).collect()
}

/// The spin budget of a backend's waits ([`fluid_core::wait`], `Backend::wait_spin`): a
/// backend that never waits for a device (the CPU's) has none and refuses one by name; a GPU
/// backend's default is zero on a CPU device (lavapipe, whose work runs on the cores a poll
/// would take) and [`fluid_core::wait::DEFAULT_SPIN`] on a hardware GPU, unless
/// `FLUID_GPU_SPIN_US` sets it; a budget past [`fluid_core::wait::MAX_SPIN`] is an error naming
/// it; and polled waits step alike with blocking ones ([`polled_waits_step_alike`]).
pub fn wait_spin_contract<B: Backend>(make: impl Fn() -> B) {
    use fluid_core::wait;
    use std::time::Duration;
    let mut b = make();
    let Some(default) = b.wait_spin() else {
        let e = b.set_wait_spin(Duration::from_millis(1)).expect_err("no device to wait for");
        assert!(e.to_string().contains("wait spin") && e.to_string().contains(b.name()), "{e}");
        return;
    };
    // The GPU backends name their device `… (…, <device type>)`.
    let cpu_device = b.device().ends_with(", Cpu)");
    match wait::spin_from_env().expect("a valid FLUID_GPU_SPIN_US") {
        None => {
            let expected = if cpu_device { Duration::ZERO } else { wait::DEFAULT_SPIN };
            assert_eq!(default, expected, "{}", b.device());
        }
        Some(spin) => assert_eq!(default, spin),
    }
    let e = b.set_wait_spin(wait::MAX_SPIN + Duration::from_micros(1)).expect_err("past the longest budget");
    assert!(e.to_string().contains("wait spin"), "{e}");
    assert_eq!(b.wait_spin(), Some(default), "a refused budget leaves the one before");
    drop(b);
    polled_waits_step_alike(|spin| {
        let mut b = make();
        b.set_wait_spin(spin).expect("spin");
        assert_eq!(b.wait_spin(), Some(spin));
        b
    });
}

/// Waits that poll the device before they block ([`fluid_core::wait`]) change nothing but
/// when the calling thread wakes: `make(spin)` is a GPU backend with that spin budget, and
/// steps with splats, each followed by `finish` and a read of the residual, give the same bits
/// with no polling, with a budget too short for any wait (every one falls back to blocking)
/// and with one long enough for most.
pub fn polled_waits_step_alike<B: Backend>(make: impl Fn(std::time::Duration) -> B) {
    use std::time::Duration;
    let run = |spin: Duration| {
        let scene = small_preset("smoke");
        let dt = scene.params.dt;
        let mut sim = Simulation::new(scene, make(spin)).expect("simulation");
        for k in 0..6 {
            let splat = Splat { center: [0.3 + 0.05 * k as f32, 0.4], radius: 0.1, density: 1.0, ..Splat::default() };
            sim.splat(carried(&sim, splat)).expect("splat");
            sim.step(dt).expect("step");
            sim.backend_mut().finish().expect("finish");
            sim.diagnostics().expect("diagnostics");
        }
        read_state(&mut sim)
    };
    let blocking = run(Duration::ZERO);
    for spin in [Duration::from_micros(1), Duration::from_millis(200)] {
        for (field, (a, b)) in STATE_FIELDS.iter().zip(blocking.iter().zip(&run(spin))) {
            let differ = bits_differ(a, b);
            assert_eq!(differ, 0, "{}: {differ} of {} values differ with a spin of {spin:?}", field.name(), a.len());
        }
    }
}

/// `Simulation::sample`, which reads back only the values its points interpolate
/// (`Backend::download_at`), equals `Grid::sample` on the whole field read back, bit for bit:
/// every public field, on a walled and a periodic grid, at a few points (each backend's own
/// copies) and at thousands (the whole-field path), the box's edges and corners among them. An
/// index past a field is an error naming it.
pub fn samples_equal_whole_field_samples<B: Backend>(make: impl Fn() -> B) {
    for preset in ["smoke", "taylor-green"] {
        // Every field a scene may carry: smoke with dye too.
        let scene = small_preset_with(preset, &["params.fields.dye=true"]);
        let dt = scene.params.dt;
        let mut sim = Simulation::new(scene, make()).expect("simulation");
        for k in 0..4 {
            let splat = Splat {
                center: [0.3 + 0.1 * k as f32, 0.5],
                radius: 0.1,
                velocity: [0.4, 0.3],
                density: 1.0,
                dye: [0.2, 0.5, 0.9, 1.0],
                ..Splat::default()
            };
            sim.splat(carried(&sim, splat)).expect("splat");
            sim.step(dt).expect("step");
        }
        let g = *sim.grid();
        let (w, h) = (g.width(), g.height());
        let mut rng = SplitMix64(17);
        let mut few = vec![[0.0, 0.0], [w, h], [w, 0.0], [0.0, h], [0.5 * g.h, 0.5 * g.h], [w * 0.5, h * 0.25]];
        few.extend((0..4).map(|_| [w * rng.next_f32(), h * rng.next_f32()]));
        let many: Vec<[f32; 2]> = (0..3000).map(|_| [w * rng.next_f32(), h * rng.next_f32()]).collect();
        let carried = sim.scene().params.fields;
        for field in FieldId::public().filter(|f| carried.carries(*f)) {
            let whole = sim.field(field).expect("field");
            for points in [&few[..], &many[..]] {
                let got = sim.sample(field, points).expect("sample");
                let want = g.sample(field, &whole, points).expect("sample of the whole field");
                let differ = bits_differ(&got, &want);
                assert_eq!(got.len(), want.len());
                assert_eq!(
                    differ,
                    0,
                    "{preset}, {}: {differ} of {} samples at {} points differ",
                    field.name(),
                    got.len(),
                    points.len()
                );
            }
        }
        let len = g.len(FieldId::U);
        let e = sim.backend_mut().download_at(FieldId::U.into(), &[0, len]).expect_err("past the field");
        assert!(e.to_string().contains(&format!("u[{len}]")), "{e}");
        assert!(sim.backend_mut().download_at(FieldId::U.into(), &[]).expect("no values").is_empty());
    }
    // Reads past what a GPU backend's kept read-back buffer holds (`Gather::KEPT_BYTES`) take a
    // buffer of their own; the ones before and after, and one of exactly its size, the kept one.
    let mut scene = small_preset("smoke");
    (scene.grid.nx, scene.grid.ny) = (200, 200);
    let mut sim = Simulation::new(scene, make()).expect("simulation");
    let len = sim.grid().len(FieldId::Density);
    let data: Vec<f32> = (0..len).map(|k| k as f32 * 0.25).collect();
    sim.set_field(FieldId::Density, &data).expect("density");
    let kept = (fluid_core::backend::Gather::KEPT_BYTES / 4) as usize;
    for (start, n) in [(3, 10), (1000, kept + 600), (5, kept), (7, 3)] {
        // Fewer values than half the field, in one run: copied, not read whole.
        assert!(2 * n < len);
        let indices: Vec<usize> = (start..start + n).rev().collect();
        let got = sim.backend_mut().download_at(FieldId::Density.into(), &indices).expect("values");
        let want: Vec<f32> = indices.iter().map(|&k| data[k]).collect();
        assert_eq!(bits_differ(&got, &want), 0, "{n} values from {start}");
    }
}

/// Samples asked for without waiting (`Simulation::request_sample`, through
/// `Backend::queue_download_at`) give the state as of their request, whatever steps follow:
/// the same bits as `Simulation::sample` at that moment, for a few points (the copied values)
/// and thousands (the whole field), taken by polling or by waiting, many in flight at once and
/// taken out of order; whole fields (`Simulation::request_field`) likewise. Each is handed over once (again is an error), another simulation's
/// backend refuses it, an empty one is there at once, a read larger than the kept read-back
/// buffer comes back whole, reads dropped unread are freed, and a read polled right after it
/// is queued behind steps still running is either not there or right, never early.
pub fn queued_reads_give_the_state_of_their_request<B: Backend>(make: impl Fn() -> B) {
    // Smoke with dye too: reads of four channels per cell.
    let scene = small_preset_with("smoke", &["params.fields.dye=true"]);
    let dt = scene.params.dt;
    let mut sim = Simulation::new(scene.clone(), make()).expect("simulation");
    let splat = |k: usize| Splat {
        center: [0.2 + 0.15 * k as f32, 0.4],
        radius: 0.1,
        velocity: [0.5, 0.6],
        density: 1.0,
        temperature: 1.0,
        dye: [0.2, 0.5, 0.9, 1.0],
        ..Splat::default()
    };
    let g = *sim.grid();
    let (w, h) = (g.width(), g.height());
    let mut rng = SplitMix64(23);
    let few: Vec<[f32; 2]> = (0..6).map(|_| [w * rng.next_f32(), h * rng.next_f32()]).collect();
    let many: Vec<[f32; 2]> = (0..3000).map(|_| [w * rng.next_f32(), h * rng.next_f32()]).collect();
    let (mut asked, mut want) = (Vec::new(), Vec::new());
    let (mut asked_fields, mut want_fields) = (Vec::new(), Vec::new());
    for k in 0..3 {
        sim.splat(carried(&sim, splat(k))).expect("splat");
        sim.step(dt).expect("step");
        for field in [FieldId::Density, FieldId::U, FieldId::Dye] {
            for points in [&few[..], &many[..]] {
                want.push(sim.sample(field, points).expect("sample"));
                asked.push(sim.request_sample(field, points).expect("request"));
            }
            want_fields.push(sim.field(field).expect("field"));
            asked_fields.push(sim.request_field(field).expect("request"));
        }
    }
    let queued = asked.len() + asked_fields.len();
    assert_eq!(sim.backend().queued_reads(), if sim.backend().name() == "cpu" { 0 } else { queued });
    // Steps after the requests, which change every field sampled.
    for k in 0..3 {
        sim.splat(carried(&sim, splat(k))).expect("splat");
        sim.step(dt).expect("step");
    }
    assert_ne!(sim.sample(FieldId::Density, &few).expect("sample"), want[0], "the steps changed nothing");
    // Taken last first: every other one by polling until it is there, the rest by waiting.
    let mut taken = Vec::new();
    for (n, (mut pending, want)) in asked.into_iter().zip(want).enumerate().rev() {
        let field = pending.field();
        assert!(!pending.is_taken(), "read {n} is not taken before it is handed over");
        let got = if n % 2 == 0 {
            let got = poll_until(&format!("read {n}"), || sim.poll_sample(&mut pending).expect("poll"));
            assert!(pending.is_taken());
            taken.push(pending);
            got
        } else {
            sim.wait_sample(pending).expect("wait")
        };
        let differ = bits_differ(&got, &want);
        assert_eq!((got.len(), differ), (want.len(), 0), "read {n} of {}: {differ} samples differ", field.name());
    }
    // Whole fields, each waited for, the oldest first.
    for (n, (pending, want)) in asked_fields.into_iter().zip(want_fields).enumerate() {
        let field = pending.field();
        let got = sim.wait_field(pending).expect("field");
        let differ = bits_differ(&got, &want);
        assert_eq!((got.len(), differ), (want.len(), 0), "field read {n} ({}): {differ} values differ", field.name());
    }
    assert_eq!(sim.backend().queued_reads(), 0);
    // Handed over once.
    let e = sim.poll_sample(&mut taken[0]).expect_err("taken already").to_string();
    assert!(e.contains("handed over already"), "{e}");
    // Another simulation's backend (of the same kind) does not hold it.
    let mut other = Simulation::new(scene.clone(), make()).expect("simulation");
    let pending = sim.request_sample(FieldId::Density, &few).expect("request");
    match other.wait_sample(pending) {
        // The CPU backend reads at once: its values travel with the request.
        Ok(got) if sim.backend().name() == "cpu" => assert_eq!(got.len(), few.len()),
        Ok(_) => panic!("another backend handed over this read"),
        Err(e) => assert!(e.to_string().contains("no such read"), "{e}"),
    }
    // Nothing asked for: there at once.
    let mut empty = sim.request_sample(FieldId::Density, &[]).expect("request");
    assert_eq!(sim.poll_sample(&mut empty).expect("poll"), Some(Vec::new()));
    // Dropped unread: freed once the device is done with them (at the next read).
    for _ in 0..20 {
        drop(sim.request_sample(FieldId::V, &few).expect("request"));
    }
    sim.backend_mut().finish().expect("finish");
    let pending = sim.request_sample(FieldId::V, &few).expect("request");
    assert!(sim.backend().queued_reads() <= 1, "{} reads held", sim.backend().queued_reads());
    let want = sim.sample(FieldId::V, &few).expect("sample");
    assert_eq!(bits_differ(&sim.wait_sample(pending).expect("wait"), &want), 0);
    assert_eq!(sim.backend().queued_reads(), 0);
    // Past the kept read-back buffer (`Gather::KEPT_BYTES`).
    let mut big = scene;
    (big.grid.nx, big.grid.ny) = (200, 200);
    let mut sim = Simulation::new(big, make()).expect("simulation");
    let len = sim.grid().len(FieldId::Density);
    let data: Vec<f32> = (0..len).map(|k| k as f32 * 0.5).collect();
    sim.set_field(FieldId::Density, &data).expect("density");
    let kept = (fluid_core::backend::Gather::KEPT_BYTES / 4) as usize;
    let indices: Vec<usize> = (9..9 + kept + 500).rev().collect();
    let read = sim.backend_mut().queue_download_at(FieldId::Density.into(), &indices).expect("queue");
    sim.step(dt).expect("step");
    let got = sim.backend_mut().wait_download(read).expect("values");
    let want: Vec<f32> = indices.iter().map(|&k| data[k]).collect();
    assert_eq!(bits_differ(&got, &want), 0);
    // A whole field past it too, polled.
    let before = sim.field(FieldId::Density).expect("field");
    let mut pending = sim.request_field(FieldId::Density).expect("request");
    assert!(!pending.is_taken(), "a field request is not taken before it is handed over");
    sim.set_field(FieldId::Density, &vec![0.0; len]).expect("density");
    let got = poll_until("the field", || sim.poll_field(&mut pending).expect("poll"));
    assert_eq!(bits_differ(&got, &before), 0);
    assert!(pending.is_taken());
    let e = sim.backend_mut().queue_download_at(FieldId::Density.into(), &[0, len]).expect_err("past the field");
    assert!(e.to_string().contains(&format!("density[{len}]")), "{e}");
    // Polled at once, behind steps still on the device: not there yet, or there with the state
    // they leave; never early with what the read-back buffer held before the copy.
    for _ in 0..3 {
        sim.step(dt).expect("step");
    }
    let mut pending = sim.request_field(FieldId::Density).expect("request");
    let early = sim.poll_field(&mut pending).expect("poll");
    let want = sim.field(FieldId::Density).expect("field");
    assert!(want.iter().any(|x| *x != 0.0), "the emitter left no density");
    let got = match early {
        Some(got) => got,
        None => {
            assert!(!pending.is_taken(), "a read not there yet is not taken");
            poll_until("the field behind queued steps", || sim.poll_field(&mut pending).expect("poll"))
        }
    };
    assert_eq!(bits_differ(&got, &want), 0, "a read polled at once, behind queued steps");
}

/// What `poll` returns once it returns something, polled every millisecond; failing after 60 s.
fn poll_until<T>(what: &str, mut poll: impl FnMut() -> Option<T>) -> T {
    let start = std::time::Instant::now();
    loop {
        if let Some(got) = poll() {
            return got;
        }
        assert!(start.elapsed().as_secs() < 60, "{what} not there after 60 s");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// `Simulation::reset` after steps with splats, then more steps: the same bits as a new
/// simulation on the same backend (its buffers, its ping-pong assignment and its prepared
/// work all carry over from before the reset).
pub fn reset_equals_new<B: Backend>(make: impl Fn() -> B) {
    let scene = small_preset("smoke");
    let dt = scene.params.dt;
    let splat = Splat { center: [0.3, 0.4], radius: 0.1, velocity: [0.5, 0.2], density: 1.0, ..Splat::default() };
    let mut a = Simulation::new(scene.clone(), make()).expect("simulation");
    // An odd number of steps, so that the reset starts from another buffer assignment.
    for _ in 0..7 {
        a.splat(carried(&a, splat)).expect("splat");
        a.step(dt).expect("step");
    }
    a.splat(carried(&a, splat)).expect("splat");
    a.reset().expect("reset");
    let mut b = Simulation::new(scene, make()).expect("simulation");
    for _ in 0..5 {
        a.step(dt).expect("step");
        b.step(dt).expect("step");
    }
    let fields = b.scene().params.fields;
    for field in STATE_FIELDS.into_iter().filter(|f| fields.carries(*f)) {
        let (x, y) = (a.field(field).expect("field"), b.field(field).expect("field"));
        let differ = bits_differ(&x, &y);
        assert_eq!(differ, 0, "{}: {differ} of {} values differ from a new simulation's", field.name(), x.len());
    }
}

/// Per-kernel timings count every dispatch: three runs of a step give each of its kernels three
/// times its dispatches in the schedule, labelled `fluid.<kernel>`, and nothing else, with
/// finite, non-negative times; taking them starts afresh, and turning timing off makes taking
/// them an error. The diagnostics count their reductions as `reduce`. Steps of four presets and
/// solvers (multigrid with forces; periodic with implicit viscosity; Jacobi sweeps; MGPCG), each
/// with its emitters' splats.
pub fn timings_count_each_kernels_dispatches<B: Backend>(make: impl Fn() -> B) {
    use fluid_core::KernelTiming;
    use std::collections::BTreeMap;
    let cases: [(&str, &[&str]); 4] = [
        ("smoke", &[]),
        ("taylor-green", &[]),
        ("stable-fluid", &[]),
        ("smoke", &["params.pressure.solver=\"mgpcg\""]),
    ];
    const RUNS: u32 = 3;
    // Invocations per label, as timed and as the schedule dispatches them in `runs` runs.
    let counts = |timings: &[KernelTiming]| -> BTreeMap<String, u32> {
        timings.iter().map(|t| (t.label.clone(), t.invocations)).collect()
    };
    let dispatched = |schedule: &Schedule, runs: u32| -> BTreeMap<String, u32> {
        let mut want = BTreeMap::new();
        for d in schedule.dispatches() {
            *want.entry(d.kernel.label()).or_default() += runs;
        }
        want
    };
    for (preset, extra) in cases {
        let ov: Vec<_> = ["grid.nx=45", "grid.ny=38"]
            .iter()
            .chain(extra)
            .map(|s| fluid::parse_override(s).expect("override"))
            .collect();
        let scene = Scene::preset_with(preset, &ov).expect("preset");
        let grid = scene.grid().expect("grid");
        let schedule = step::step(&grid, &scene.params);
        let what = format!("{preset} {extra:?}");
        assert_eq!(schedule.reduction_slots(), 0, "{what}: a step schedule with reductions");
        let dt = scene.params.dt;
        let inputs = StepInputs { dt, splats: scene.emitter_splats(&grid, dt), ..StepInputs::default() };
        let mut b = make();
        load(&mut b, &grid, &scene.initial_fields(&grid));
        b.set_timing(true).expect("timing");
        for _ in 0..RUNS {
            b.run(&schedule, &inputs).expect("run");
        }
        let timings = b.take_timings().expect("timings");
        let got = counts(&timings);
        assert_eq!(got.len(), timings.len(), "{what}: a label twice in {timings:?}");
        assert_eq!(got, dispatched(&schedule, RUNS), "{what}: invocations per kernel");
        for t in &timings {
            assert!(t.ms.is_finite() && t.ms >= 0.0, "{what}: {} took {} ms", t.label, t.ms);
        }
        assert!(timings.iter().any(|t| t.ms > 0.0), "{what}: every kernel took no time");
        assert_eq!(b.take_timings().expect("timings"), Vec::new(), "{what}: taken twice");
        b.run(&schedule, &inputs).expect("run");
        let once = counts(&b.take_timings().expect("timings"));
        assert_eq!(once, dispatched(&schedule, 1), "{what}: one run after taking");
        // The diagnostics: their kernels, and every reduction as `reduce`, one pass each on the
        // CPU and two on a GPU (partial sums, then their total).
        let diagnostics = step::diagnostics(&grid);
        b.run(&diagnostics, &inputs).expect("diagnostics");
        let got = counts(&b.take_timings().expect("timings"));
        let reductions =
            diagnostics.ops().iter().filter(|op| matches!(op, fluid_core::Op::Reduce { .. })).count() as u32;
        assert!(reductions > 0, "{what}: diagnostics without reductions");
        let mut want = dispatched(&diagnostics, 1);
        want.insert("fluid.reduce".to_string(), reductions * if b.name() == "cpu" { 1 } else { 2 });
        assert_eq!(got, want, "{what}: the diagnostics' invocations");
        b.set_timing(false).expect("timing off");
        b.run(&schedule, &inputs).expect("run");
        b.take_timings().expect_err("timings taken with timing off");
    }
}

/// A splat centred past the edge of a periodic axis, by whole box lengths or more, is the
/// same splat as the one inside the box it wraps to, bit for bit; one wholly past a wall
/// (farther than its falloff reaches) changes nothing. A 16 × 12 box of cell 1/16 (1 × 0.75
/// world units, so the shifted centres are exact), periodic along x, walls along y.
pub fn splats_wrap_on_periodic_axes<B: Backend>(make: impl Fn() -> B) {
    let ov: Vec<_> =
        ["grid.nx=16", "grid.ny=12", "grid.h=0.0625", "params.boundary.x=\"periodic\"", "emitters=[]", "splats=[]"]
            .iter()
            .map(|s| fluid::parse_override(s).expect("override"))
            .collect();
    let scene = Scene::preset_with("ink", &ov).expect("scene");
    let dt = scene.params.dt;
    let splat = Splat {
        center: [0.3125, 0.375],
        radius: 0.125,
        falloff: fluid::Falloff::Gaussian,
        velocity: [0.5, -0.25],
        dye: [0.25, 0.5, 0.75, 1.0],
        ..Splat::default()
    };
    let after_one_step = |splat: Option<Splat>| -> Vec<Vec<f32>> {
        let mut sim = Simulation::new(scene.clone(), make()).expect("simulation");
        if let Some(s) = splat {
            sim.splat(carried(&sim, s)).expect("splat");
        }
        sim.step(dt).expect("step");
        read_state(&mut sim)
    };
    let inside = after_one_step(Some(splat));
    assert!(inside[STATE_FIELDS.iter().position(|&f| f == FieldId::Dye).expect("dye")].iter().any(|&x| x != 0.0));
    for shift in [-2.0, -1.0, 1.0, 2.0, 5.0] {
        let moved = Splat { center: [splat.center[0] + shift, splat.center[1]], ..splat };
        let got = after_one_step(Some(moved));
        for (k, field) in STATE_FIELDS.iter().enumerate() {
            let differ = bits_differ(&got[k], &inside[k]);
            assert_eq!(differ, 0, "x shifted by {shift} box lengths: {differ} values of {} differ", field.name());
        }
    }
    let none = after_one_step(None);
    for y in [-0.51, 1.26] {
        let past_the_wall = after_one_step(Some(Splat { center: [splat.center[0], y], ..splat }));
        for (k, field) in STATE_FIELDS.iter().enumerate() {
            let differ = bits_differ(&past_the_wall[k], &none[k]);
            assert_eq!(differ, 0, "a splat at y = {y}, past the wall: {differ} values of {} changed", field.name());
        }
    }
}

/// Two simulations on two threads at once, each backend made, stepped and dropped on its own
/// thread (an application with two effects, or a tool running scenes side by side): each gives
/// the same bits as the same simulation run alone. The two runs have different lengths, so one
/// thread's teardown overlaps the other's steps, and there are three rounds, so that setups
/// overlap steps and teardowns too.
pub fn concurrent_equals_alone<B: Backend>(make: impl Fn() -> B + Sync) {
    let run = |steps: usize| steps_with_splats("smoke", make(), steps);
    let lengths = [9, 14];
    let alone = lengths.map(run);
    for round in 0..3 {
        let together = std::thread::scope(|s| {
            let handles = lengths.map(|n| s.spawn(move || run(n)));
            handles.map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
        });
        for (t, (got, want)) in together.iter().zip(&alone).enumerate() {
            for ((field, x), y) in STATE_FIELDS.iter().zip(got).zip(want) {
                let differ = bits_differ(x, y);
                assert_eq!(
                    differ,
                    0,
                    "round {round}, thread {t}: {}: {differ} of {} values differ from the run alone",
                    field.name(),
                    x.len()
                );
            }
        }
    }
}

/// A preset on a small odd grid for [`PRESET_STEPS`] steps (its parameters changed after 12), every state field compared with
/// the CPU backend.
pub fn preset_parity<B: Backend>(make: impl Fn() -> B, preset: &str) {
    let scene = small_preset(preset);
    let dt = scene.params.dt;
    let grid = scene.grid().expect("grid");
    let mut cpu = Simulation::new(scene.clone(), CpuBackend::new().expect("cpu backend")).expect("cpu simulation");
    let mut other = Simulation::new(scene, make()).expect("simulation");
    for k in 0..PRESET_STEPS {
        if k % 7 == 0 {
            let s = Splat {
                center: [0.4 * grid.width(), 0.6 * grid.height()],
                radius: 0.1 * grid.height(),
                falloff: fluid::Falloff::Gaussian,
                velocity: [0.5, -0.3],
                density: 0.5,
                temperature: 1.0,
                dye: [0.3, 0.6, 0.1, 0.8],
            };
            cpu.splat(carried(&cpu, s)).expect("splat");
            other.splat(carried(&other, s)).expect("splat");
        }
        if k == 10 {
            // More splats in one step than a GPU backend's first splat buffer holds (16): it
            // grows, and every run after must bind the new buffer.
            for m in 0..40 {
                let s = Splat {
                    center: [(0.1 + 0.02 * m as f32) * grid.width(), (0.2 + 0.015 * m as f32) * grid.height()],
                    radius: 0.04 * grid.height(),
                    density: 0.2,
                    velocity: [0.1, 0.2],
                    ..Splat::default()
                };
                cpu.splat(carried(&cpu, s)).expect("splat");
                other.splat(carried(&other, s)).expect("splat");
            }
        }
        if k == 12 {
            // Parameters changed mid-run (`Simulation::set_params`): a new schedule, with
            // viscous diffusion's longer ping-pong cycle, on the state the old one left.
            let mut params = cpu.scene().params.clone();
            params.vorticity += 2.0;
            params.viscosity += 5e-4;
            cpu.set_params(params.clone()).expect("cpu set_params");
            other.set_params(params).expect("set_params");
        }
        cpu.step(dt).expect("cpu step");
        other.step(dt).expect("step");
    }
    check_states(&format!("preset-{preset}"), &grid, &mut cpu, &mut other);
    let (da, db) = (cpu.diagnostics().expect("cpu diagnostics"), other.diagnostics().expect("diagnostics"));
    // Within 1 %, or within f32 rounding of a divergence (16 ulps of max |u| / h) once the
    // solver has driven it down to that floor (multigrid does).
    let u = cpu.field(FieldId::U).expect("u");
    let floor =
        16.0 * f64::from(f32::EPSILON) * u.iter().fold(0.0f64, |m, x| m.max(f64::from(x.abs()))) / f64::from(grid.h);
    let diff = (da.max_divergence - db.max_divergence).abs();
    assert!(
        diff < 1e-2 * da.max_divergence || diff < floor,
        "max |div u|: cpu {:.4e}, other {:.4e} (rounding floor {floor:.1e})",
        da.max_divergence,
        db.max_divergence
    );
}

/// Every state field of two simulations of one scene within [`PRESET_TOLERANCE`].
fn check_states<B: Backend>(name: &str, grid: &Grid, cpu: &mut Simulation<CpuBackend>, other: &mut Simulation<B>) {
    let fields = cpu.scene().params.fields;
    for field in STATE_FIELDS.into_iter().filter(|f| fields.carries(*f)) {
        let mut a = cpu.field(field).expect("cpu field");
        let mut b = other.field(field).expect("field");
        if field == FieldId::Pressure {
            // Pressure with walls or periodic axes all round is defined up to a constant (only
            // its gradient acts), and a warm-started solve that stops after a few iterations
            // lets that constant drift with rounding: compare it with each mean removed.
            remove_mean(&mut a);
            remove_mean(&mut b);
        }
        check(name, grid, field, &a, &b, PRESET_TOLERANCE);
    }
}

/// Random scenes ([`random_scene`]) whose whole steps [`random_scenes_parity`] compares;
/// `FLUID_RANDOM_SCENES=N` runs seeds 0 to N − 1 instead, for a longer search.
pub const RANDOM_SCENES: u64 = 12;

/// Steps of each random scene.
pub const RANDOM_SCENE_STEPS: u32 = 10;

/// Scene `seed` of the random-scene parity check, as `--set` overrides of a preset: a random
/// grid of 9 to 48 cells a side, boundaries, pressure solver (each in turn, with a random
/// iteration count in its useful range, warm start and precision), backtrace order,
/// viscosity, vorticity confinement, gravity, speed clamp and dissipation. The presets fix
/// one combination each; these mix them, so that a kernel's treatment of one setting is
/// checked beside the others (a periodic axis under multigrid, MGPCG with viscosity, an
/// odd grid under the Poisson filter). Combinations a scene refuses are drawn again.
pub fn random_scene(seed: u64) -> (String, Vec<String>, Scene) {
    let mut rng = SplitMix64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5EED);
    let mut pick = |n: u64| rng.next_u64() % n;
    loop {
        let preset = ["smoke", "ink", "taylor-green", "stable-fluid"][pick(4) as usize];
        let mut set = vec![format!("grid.nx={}", 9 + pick(40)), format!("grid.ny={}", 9 + pick(40))];
        for axis in ["x", "y"] {
            set.push(format!("params.boundary.{axis}={}", ["wall", "periodic"][pick(2) as usize]));
        }
        // Every solver in turn, so that each is in the sample whatever the draws.
        let solver = ["jacobi", "jacobi-multisweep", "sor", "multigrid", "mgpcg", "poisson-filter", "relaxation"]
            [(seed % 7) as usize];
        let iterations = match solver {
            "multigrid" => 1 + pick(4),
            "mgpcg" => 1 + pick(12),
            "poisson-filter" => 1 + pick(32),
            _ => 5 + pick(56),
        };
        set.push(format!("params.pressure.solver={solver}"));
        set.push(format!("params.pressure.iterations={iterations}"));
        set.push(format!("params.pressure.warm_start={}", pick(2) == 0));
        if solver == "multigrid" {
            set.push(format!("params.pressure.precision={}", ["single", "double-float"][pick(2) as usize]));
        }
        set.push(format!("params.advection.backtrace={}", ["euler", "rk2", "rk3"][pick(3) as usize]));
        if pick(2) == 0 {
            set.push("params.viscosity=0.002".into());
            set.push(format!("params.viscosity_iterations={}", 5 + pick(26)));
        } else {
            set.push("params.viscosity=0".into());
        }
        set.push(format!("params.vorticity={}", [0, 4][pick(2) as usize]));
        set.push(format!("params.gravity=[0, {}]", [0.0, -1.0][pick(2) as usize]));
        if pick(3) == 0 {
            set.push("params.max_speed=1.5".into());
        }
        set.push(format!("params.dissipation.density={}", [0.0, 0.5][pick(2) as usize]));
        let overrides: Vec<_> = set.iter().map(|s| fluid::parse_override(s).expect("override")).collect();
        if let Ok(scene) = Scene::preset_with(preset, &overrides) {
            return (preset.to_string(), set, scene);
        }
    }
}

/// Whole steps of [`RANDOM_SCENES`] random scenes ([`random_scene`]), with a splat every third
/// step, against the CPU backend: every state field within [`PRESET_TOLERANCE`] after
/// [`RANDOM_SCENE_STEPS`] steps (`check_states`, as [`preset_parity`] does).
pub fn random_scenes_parity<B: Backend>(make: impl Fn() -> B) {
    let count = match std::env::var("FLUID_RANDOM_SCENES") {
        Ok(n) => n.parse().unwrap_or_else(|_| panic!("FLUID_RANDOM_SCENES={n}: not a count")),
        Err(_) => RANDOM_SCENES,
    };
    for seed in 0..count {
        let (preset, set, scene) = random_scene(seed);
        let name = format!("random-scene-{seed} ({preset} --set {})", set.join(" --set "));
        let grid = scene.grid().expect("grid");
        let dt = scene.params.dt;
        let mut cpu = Simulation::new(scene.clone(), CpuBackend::new().expect("cpu backend")).expect("cpu simulation");
        let mut other = Simulation::new(scene, make()).expect(&name);
        for k in 0..RANDOM_SCENE_STEPS {
            if k % 3 == 0 {
                let s = Splat {
                    center: [(0.3 + 0.04 * k as f32) * grid.width(), 0.45 * grid.height()],
                    radius: 0.12 * grid.height(),
                    falloff: if k % 2 == 0 { fluid::Falloff::Gaussian } else { fluid::Falloff::Linear },
                    velocity: [0.6, -0.4],
                    density: 0.7,
                    temperature: 1.0,
                    dye: [0.2, 0.5, 0.9, 1.0],
                };
                cpu.splat(carried(&cpu, s)).expect("splat");
                other.splat(carried(&other, s)).expect("splat");
            }
            cpu.step(dt).expect(&name);
            other.step(dt).expect(&name);
        }
        check_states(&name, &grid, &mut cpu, &mut other);
    }
}
