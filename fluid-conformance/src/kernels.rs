//! Every kernel against the CPU backend: one dispatch on random non-zero inputs, on odd,
//! non-square grids with walls, periodic and mixed boundaries, every field it writes within
//! the kernel's [`tolerance`].

use swirly::{Boundary, CpuBackend, FieldId, Splat, backend::Backend, backend::StepInputs, model::Grid};
use swirly_core::grid::kernels;
use swirly_core::grid::pressure::multigrid::{LOAD_COPY, LOAD_RESIDUAL, Level, STORE_ADD, STORE_COPY, STORE_PAIR};
use swirly_core::grid::uniforms::{
    ADVECT_DENSITY, ADVECT_DYE, ADVECT_TEMPERATURE, AMOUNT_DENSITY, AMOUNT_FUEL, AMOUNT_TEMPERATURE, AdvectParams,
    BurnParams, CARRY_FUEL, CHANNEL_Q0, CHANNEL_Q1, CHANNEL_RGBA, CgParams, ChannelParams, DiffuseParams, DyeParams,
    FilterParams, ForceParams, INFLOW_AMBIENT, INFLOW_DYE, INFLOW_HEAT, INFLOW_SMOKE, JacobiParams, MULTISWEEP_MAX,
    MgParams, SHARP_BFECC, SHARP_CUBIC, SHARP_DYE, SHARP_MACCORMACK, SHARP_SCALAR, SharpParams, SplatParams,
    TapsParams, TensionParams, TurbulenceParams,
};
use swirly_core::grid::{Inflow, Side};
use swirly_core::ir::kernel::Access;
use swirly_core::ir::schedule::ParamBlock;
use swirly_core::scene::SplitMix64;
use swirly_core::{Kernel, Schedule};

use crate::compare::{Tolerance, check, check_f64};
use crate::support::{random_field, single};

/// The tolerance of each kernel against the CPU backend, and why.
///
/// - Pure stencil arithmetic in the same order as the CPU (`divergence`, `jacobi`,
///   `subtract_gradient`, `residual`, `curl`, `diffuse_velocity`): 1e-6 relative L2 and 1e-5
///   max-abs — a GPU may fuse a multiply-add (one rounding instead of two), nothing else.
/// - `apply_forces`: adds a division and a square root per cell (vorticity normal): 1e-5 / 1e-4;
///   `clamp_speed` likewise (a scale from a division and a square root).
/// - `splat`: `exp` and `sqrt` differ by a few ulp between libm and GPU hardware: 1e-5 / 1e-4;
///   `burn` likewise (its `exp` of the burn rate); `turbulence` (differences of noise that a
///   fused multiply-add rounds differently, divided by h).
/// - `advect_velocity`, `advect_channels`: three RK stages each feed a sampling position; a
///   one-ulp position difference moves the bilinear weights by ~1e-7 of a cell times the local
///   gradient, and `exp` of the dissipation differs by ulps: 1e-5 relative L2, 1e-4 max-abs.
pub fn tolerance(kernel: Kernel) -> Tolerance {
    match kernel {
        kernels::ADVECT_VELOCITY
        | kernels::ADVECT_CHANNELS
        | kernels::BACK_VELOCITY
        | kernels::BACK_CELLS
        | kernels::SHARP_VELOCITY
        | kernels::SHARP_CELLS
        | kernels::CURVATURE
        | kernels::SURFACE_TENSION
        | kernels::BURN
        | kernels::SPLAT
        | kernels::SPLAT_CELLS
        | kernels::TURBULENCE
        | kernels::APPLY_FORCES
        | kernels::CLAMP_SPEED => Tolerance { max_abs: 1e-4, rel_l2: 1e-5 },
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

/// The finer density's kernels (run on a density grid three times finer).
const FINE_DENSITY: [Kernel; 2] = [kernels::COARSE_DENSITY, kernels::FINE_SOOT];

/// Every grid kernel of the engine's table ([`swirly_core::kernels`]) has a parity fixture
/// (schedules with non-trivial parameters) and a test of its own among `tested`, the suite's
/// rows: a kernel added to the table without them fails here, naming it. The particle
/// suite checks its kernels the same way (`every_particle_kernel_matches_the_cpu`).
pub fn every_grid_kernel_is_covered(tested: &[Kernel]) {
    let grid = Grid::new(9, 7, 0.1, Boundary::Wall, Boundary::Wall).expect("grid");
    let table = swirly_core::kernels();
    let grid_kernels: Vec<Kernel> = table.iter().copied().filter(|k| kernels::ALL.contains(k)).collect();
    assert!(!grid_kernels.is_empty(), "the table holds no grid kernel");
    let mut missing = Vec::new();
    for kernel in &grid_kernels {
        if kernel_schedules(&grid, *kernel).is_none_or(|s| s.is_empty()) {
            missing.push(format!("{} has no parity fixture", kernel.name));
        }
        if !tested.contains(kernel) {
            missing.push(format!("{} has no row in conformance!'s kernel tests", kernel.name));
        }
    }
    for kernel in tested {
        if !grid_kernels.contains(kernel) {
            missing.push(format!("{} is tested but not in swirly_core::kernels()", kernel.name));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("; "));
}

/// Run `kernel` once on random non-zero inputs, on odd non-square grids with walls, periodic
/// and mixed boundaries (and one tiny periodic grid), and compare every field it writes with
/// the CPU backend.
pub fn kernel_parity<B: Backend>(make: impl Fn() -> B, kernel: Kernel) {
    // The kernels with a path for obstacles run it too, on faces of random open fractions
    // (some closed, some open, the rest between) and solid velocities; `rasterise_solids`,
    // `mg_weights` and `mg_smooth2_solid` only there (`rasterise_solids` on a table of every
    // shape, moving).
    let solid_aware = [
        kernels::SPLAT,
        kernels::SPLAT_CELLS,
        kernels::TURBULENCE,
        kernels::DIFFUSE_VELOCITY,
        kernels::DIFFUSE_TEMPERATURE,
        kernels::DIVERGENCE,
        kernels::APPLY_FORCES,
        kernels::JACOBI,
        kernels::SOR,
        kernels::SUBTRACT_GRADIENT,
        kernels::RESIDUAL,
        kernels::MG_LOAD,
        kernels::MG_SMOOTH,
        kernels::MG_RESTRICT,
        kernels::MG_COARSE,
        kernels::CG_INIT,
        kernels::CG_APPLY,
    ];
    let modes: &[bool] =
        if [kernels::RASTERISE_SOLIDS, kernels::HOLD_HEAT, kernels::MG_WEIGHTS, kernels::MG_SMOOTH2_SOLID]
            .contains(&kernel)
        {
            &[true]
        } else if solid_aware.contains(&kernel) {
            &[false, true]
        } else {
            &[false]
        };
    // One backend of each for every case: each case allocates its grid's resources anew, as a
    // new scene does (and making a GPU backend costs more than most cases).
    let mut cpu = CpuBackend::new().expect("cpu backend");
    let mut other = make();
    for &solids in modes {
        kernel_parity_on(&mut cpu, &mut other, kernel, solids);
    }
}

fn kernel_parity_on<B: Backend>(cpu: &mut CpuBackend, other: &mut B, kernel: Kernel, solids: bool) {
    // Odd, non-square grids; one smaller than a GPU workgroup that wraps more than once.
    let cases = [
        (37, 23, Boundary::Wall, Boundary::Wall),
        (37, 23, Boundary::Periodic, Boundary::Periodic),
        (37, 23, Boundary::Periodic, Boundary::Wall),
        (5, 3, Boundary::Periodic, Boundary::Periodic),
        // Large enough for interior GPU tiles (fast paths that skip boundary checks).
        (71, 53, Boundary::Wall, Boundary::Wall),
    ];
    // Then every kind of side: an inflow (parabolic, carrying smoke in stripes), outflows and
    // a moving no-slip wall; and a closed box of no-slip walls, a lid on top, the left and
    // right walls held at temperatures.
    let inflow = Side::Inflow(Inflow {
        speed: 0.8,
        parabolic: true,
        density: 0.9,
        temperature: 1.5,
        dye: [0.2, 0.4, 0.6, 0.8],
        stripes: 3,
    });
    let no_slip = |speed| Side::Wall { no_slip: true, speed, temperature: None };
    let held = |speed, t| Side::Wall { no_slip: true, speed, temperature: Some(t) };
    let sides = [
        (37, 23, [inflow, Side::Open, no_slip(0.7), Side::Open]),
        (29, 31, [held(0.0, 1.0), held(-0.3, -0.5), no_slip(0.0), no_slip(1.0)]),
    ];
    let cases = cases
        .map(|(nx, ny, bx, by)| (nx, ny, bx, by, None))
        .into_iter()
        .chain(sides.map(|(nx, ny, sides)| (nx, ny, Boundary::Wall, Boundary::Wall, Some(sides))));
    for (case, (nx, ny, bx, by, sides)) in cases.enumerate() {
        // The finer density's kernels on grids three times finer; the channel kernels on the
        // velocity's cells in even cases, on finer lattices in odd ones.
        let fine = [kernels::ADVECT_CHANNELS, kernels::SPLAT_CELLS].contains(&kernel) && case % 2 == 1;
        let dye_factor = if fine { 3 } else { 1 };
        let density_factor = if fine || FINE_DENSITY.contains(&kernel) { 3 } else { 1 };
        let grid = Grid { solids, dye_factor, density_factor, ..Grid::new(nx, ny, 0.1, bx, by).expect("grid") };
        let grid = match sides {
            Some(sides) => grid.with_sides(sides).expect("sides"),
            None => grid,
        };
        let mut rng = SplitMix64(1000 + case as u64);
        let mut fields: Vec<(FieldId, Vec<f32>)> =
            FieldId::STATE_AND_SCRATCH.iter().map(|f| (*f, random_field(&grid, *f, &mut rng))).collect();
        let table = if solids { crate::support::obstacle_table(&grid) } else { Vec::new() };
        if solids {
            fields.push((FieldId::Obstacles, table.clone()));
        }
        // A double-float pressure's low part lies within half an ulp of its high part.
        let hi = fields.iter().find(|(f, _)| *f == FieldId::Pressure).map(|(_, v)| v.clone()).expect("pressure");
        if let Some((_, lo)) = fields.iter_mut().find(|(f, _)| *f == FieldId::PressureLo) {
            for (l, h) in lo.iter_mut().zip(&hi) {
                *l = (rng.next_f32() - 0.5) * 0.9 * ulp(*h);
            }
        }
        let inputs = StepInputs {
            dt: 0.05,
            time: 0.0,
            step: 0,
            records: swirly_core::splat::records(&random_splats(&grid, &mut rng), &grid).expect("splats"),
        };
        let schedules = kernel_schedules(&grid, kernel)
            .unwrap_or_else(|| panic!("{}: no parity fixture in swirly-conformance's kernel_schedules", kernel.name));
        for (k, schedule) in schedules.iter().enumerate() {
            crate::support::load_with_table(cpu, &grid, &fields, table.len() / 4);
            crate::support::load_with_table(other, &grid, &fields, table.len() / 4);
            cpu.run(schedule, &inputs).expect("cpu run");
            other.run(schedule, &inputs).expect("run");
            let d = schedule.dispatches().next().expect("dispatch");
            for (slot, id) in kernel.bindings.iter().zip(&d.resources) {
                if slot.access == Access::Read {
                    continue;
                }
                let field = &FieldId::from_resource(*id).expect("a grid field");
                if field.is_vacant() {
                    continue;
                }
                let a = cpu.download(*id).expect("cpu download");
                let b = other.download(*id).expect("download");
                let solid = if solids { "-solids" } else { "" };
                let name = format!("{}-{case}-{nx}x{ny}-{:?}-{:?}-{k}{solid}", kernel.name, bx, by).to_lowercase();
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

/// What every fixture of a kernel builds on: the grid, the kernel, its extent and the
/// multigrid hierarchy of the grid.
struct Fixture<'a> {
    grid: &'a Grid,
    kernel: Kernel,
    whole_grid: [u32; 2],
    levels: Vec<Level>,
}

impl Fixture<'_> {
    /// One dispatch over the kernel's whole domain.
    fn one(&self, fields: &[FieldId], params: Option<ParamBlock>) -> Schedule {
        single(self.grid, self.kernel, fields, params, self.whole_grid)
    }

    /// One dispatch over a multigrid level.
    fn mg(&self, fields: &[FieldId], p: MgParams, over: &Level) -> Schedule {
        single(self.grid, self.kernel, fields, Some(ParamBlock::new(&p)), [over.nx, over.ny])
    }
}

/// Single-dispatch schedules that exercise `kernel` with non-trivial parameters; `None` for a
/// kernel with no fixture here (a test fails: see [`every_grid_kernel_is_covered`]).
fn kernel_schedules(grid: &Grid, kernel: Kernel) -> Option<Vec<Schedule>> {
    let faces = [grid.nx + 1, grid.ny + 1];
    let whole_grid = if kernel.domain == swirly_core::ir::kernel::Domain::Faces { faces } else { [grid.nx, grid.ny] };
    // The multigrid kernels run over one level of the hierarchy of this grid.
    let levels = swirly_core::grid::pressure::multigrid::levels(grid.nx, grid.ny);
    let f = Fixture { grid, kernel, whole_grid, levels };
    field_fixtures(&f)
        .or_else(|| force_fixtures(&f))
        .or_else(|| pressure_fixtures(&f))
        .or_else(|| multigrid_fixtures(&f))
}

/// Advection's parameters at `order`: the velocity's dissipation, every field carried.
fn advect(order: u32) -> AdvectParams {
    AdvectParams {
        order,
        fields: ADVECT_DENSITY | ADVECT_TEMPERATURE | ADVECT_DYE | CARRY_FUEL,
        velocity_dissipation: 0.3,
        ambient_temperature: 0.4,
    }
}

/// `advect_channels`' fixtures: with the density and dye on the velocity's cells, the density,
/// temperature and dye in one dispatch at each order, and the fuel alone; with both three
/// times finer, the two on their lattice at each order, and temperature and fuel together.
/// Each channel has its own dissipation, ambient value and inflow ghost.
fn channel_fixtures(grid: &Grid) -> Vec<Schedule> {
    use FieldId::*;
    let smoke = (0.2, 0.0, INFLOW_SMOKE);
    let heat = (0.7, 0.4, INFLOW_HEAT);
    let fuel = (0.25, 0.0, INFLOW_AMBIENT);
    let run = |order: u32, factor: u32, fields: [FieldId; 8], q: [(f32, f32, u32); 2]| {
        let mut channels = 0;
        for (k, bit) in [(2, CHANNEL_Q0), (3, CHANNEL_Q1), (4, CHANNEL_RGBA)] {
            if fields[k] != Vacant {
                channels |= bit;
            }
        }
        let p = ChannelParams {
            order,
            factor,
            channels,
            q0_inflow: q[0].2,
            q1_inflow: q[1].2,
            rgba_inflow: INFLOW_DYE,
            q0_rate: q[0].0,
            q0_ambient: q[0].1,
            q1_rate: q[1].0,
            q1_ambient: q[1].1,
            rgba_rate: 0.1,
            _pad: 0,
        };
        single(grid, kernels::ADVECT_CHANNELS, &fields, Some(ParamBlock::new(&p)), [grid.nx * factor, grid.ny * factor])
    };
    let mut out = Vec::new();
    if grid.dye_factor <= 1 {
        for order in 1..=3 {
            let fields = [U, V, Density, Temperature, Dye, DensityTmp, TemperatureTmp, DyeTmp];
            out.push(run(order, 1, fields, [smoke, heat]));
        }
        out.push(run(2, 1, [U, V, Fuel, Vacant, Vacant, FuelTmp, VacantOut0, VacantOut1], [fuel, heat]));
    } else {
        for order in 1..=3 {
            let fields = [U, V, Density, Vacant, Dye, DensityTmp, VacantOut0, DyeTmp];
            out.push(run(order, grid.dye_factor, fields, [smoke, heat]));
        }
        let fields = [U, V, Temperature, Fuel, Vacant, TemperatureTmp, FuelTmp, VacantOut0];
        out.push(run(3, 1, fields, [heat, fuel]));
    }
    out
}

/// `splat_cells`' fixtures: on the velocity's cells, fuel and temperature, and density with
/// the dye; with the density and dye three times finer, the two on their lattice, and fuel
/// alone on the velocity's cells.
fn splat_fixtures(grid: &Grid) -> Vec<Schedule> {
    use FieldId::*;
    let run = |factor: u32, [q0, q1, rgba]: [FieldId; 3], amounts: [u32; 2]| {
        let mut channels = 0;
        for (f, bit) in [(q0, CHANNEL_Q0), (q1, CHANNEL_Q1), (rgba, CHANNEL_RGBA)] {
            if !f.is_vacant() {
                channels |= bit;
            }
        }
        let p = SplatParams { factor, channels, q0_amount: amounts[0], q1_amount: amounts[1] };
        let fields = [q0, q1, rgba, Solid, UFaces, VFaces];
        single(grid, kernels::SPLAT_CELLS, &fields, Some(ParamBlock::new(&p)), [grid.nx * factor, grid.ny * factor])
    };
    let (density, fuel) = ([AMOUNT_DENSITY, AMOUNT_FUEL], [AMOUNT_FUEL, AMOUNT_TEMPERATURE]);
    if grid.dye_factor <= 1 {
        vec![run(1, [Fuel, Temperature, VacantOut0], fuel), run(1, [Density, VacantOut0, Dye], density)]
    } else {
        vec![run(grid.dye_factor, [Density, VacantOut0, Dye], density), run(1, [Fuel, VacantOut0, VacantOut1], fuel)]
    }
}

/// The sharp schemes' parameters.
fn sharp(order: u32, scheme: u32, fields: u32) -> SharpParams {
    SharpParams { order, scheme, fields, rate: 0.3, ambient: 0.4, dye_rate: 0.1, _pad: [0; 2] }
}

/// Advection (plain and sharp), splats, combustion and the finer fields.
fn field_fixtures(f: &Fixture<'_>) -> Option<Vec<Schedule>> {
    use FieldId::*;
    let (grid, kernel) = (f.grid, f.kernel);
    let one = |fields: &[FieldId], params: Option<ParamBlock>| f.one(fields, params);
    Some(match f.kernel {
        kernels::ADVECT_VELOCITY => {
            (1..=3).map(|o| one(&[U, V, UTmp, VTmp], Some(ParamBlock::new(&advect(o))))).collect()
        }
        kernels::ADVECT_CHANNELS => channel_fixtures(grid),
        kernels::BACK_VELOCITY => {
            (1..=3).map(|o| one(&[U, V, UTmp, VTmp, UBack, VBack], Some(ParamBlock::new(&sharp(o, 0, 0))))).collect()
        }
        kernels::BACK_CELLS => (1..=3)
            .map(|o| {
                let p = sharp(o, 0, SHARP_SCALAR | SHARP_DYE);
                one(&[U, V, TemperatureTmp, Back, DyeTmp, DyeBack], Some(ParamBlock::new(&p)))
            })
            .collect(),
        // Each scheme on random fields, semi-Lagrangian values and round trips: the limiter
        // clamps many of them.
        kernels::SHARP_VELOCITY => [SHARP_MACCORMACK, SHARP_BFECC, SHARP_CUBIC]
            .iter()
            .map(|&s| one(&[U, V, UBack, VBack, UTmp, VTmp], Some(ParamBlock::new(&sharp(2, s, 0)))))
            .collect(),
        kernels::SHARP_CELLS => [SHARP_MACCORMACK, SHARP_BFECC, SHARP_CUBIC]
            .iter()
            .map(|&s| {
                let p = sharp(3, s, SHARP_SCALAR | SHARP_DYE);
                one(&[U, V, Temperature, Back, TemperatureTmp, Dye, DyeBack, DyeTmp], Some(ParamBlock::new(&p)))
            })
            .collect(),
        kernels::CURVATURE => vec![one(&[Density, Scratch], None)],
        kernels::SURFACE_TENSION => {
            let p = TensionParams { strength: 0.02, _pad: [0; 3] };
            vec![one(&[Density, Scratch, U, V], Some(ParamBlock::new(&p)))]
        }
        // Random fuel of either sign and temperatures either side of ignition: cells that burn
        // and cells that do not; with soot and expansion, and with neither.
        kernels::BURN => [(0.6f32, 0.8f32), (0.0, 0.0)]
            .iter()
            .map(|&(soot, expansion)| {
                let p = BurnParams { rate: 3.0, ignition: 0.1, heat: 1.7, soot, expansion, _pad: [0; 3] };
                one(&[Fuel, Temperature, Density, Expansion], Some(ParamBlock::new(&p)))
            })
            .collect(),
        kernels::EXPAND => vec![one(&[Expansion, Divergence], None)],
        kernels::SPLAT => {
            let p = DyeParams { order: 1, factor: 1, dissipation: 0.0, _pad: 0 };
            vec![one(&[U, V, Density, Temperature, Dye, UFaces, VFaces], Some(ParamBlock::new(&p)))]
        }
        kernels::SPLAT_CELLS => splat_fixtures(grid),
        kernels::COARSE_DENSITY | kernels::FINE_SOOT => {
            let fine = grid.density_dims();
            let (fields, extent): (&[FieldId], _) = match kernel {
                kernels::COARSE_DENSITY => (&[Density, DensityCoarse, Scratch], (grid.nx, grid.ny)),
                _ => (&[Density, DensityCoarse, Scratch], fine),
            };
            let p = DyeParams { order: 1, factor: grid.density_factor, dissipation: 0.0, _pad: 0 };
            vec![single(grid, kernel, fields, Some(ParamBlock::new(&p)), [extent.0, extent.1])]
        }
        _ => return None,
    })
}

/// Curl, forces, turbulence, the speed clamp and diffusion.
fn force_fixtures(f: &Fixture<'_>) -> Option<Vec<Schedule>> {
    use FieldId::*;
    let grid = f.grid;
    let one = |fields: &[FieldId], params: Option<ParamBlock>| f.one(fields, params);
    Some(match f.kernel {
        kernels::CURL => vec![one(&[U, V, Curl], None)],
        // Three octaves, with and without a mask; on periodic axes the lattice wraps.
        kernels::TURBULENCE => [0u32, 1]
            .iter()
            .map(|&mask| {
                let period = |periodic: bool, n: u32| if periodic { n } else { 0 };
                let p = TurbulenceParams {
                    amplitude: 3.0,
                    speed: 0.7,
                    inv_scale: [2.5, 3.0],
                    period: [
                        period(grid.boundary_x == Boundary::Periodic, 9),
                        period(grid.boundary_y == Boundary::Periodic, 7),
                    ],
                    octaves: 3,
                    mask,
                    mask_offset: 0.1,
                    mask_full: 0.8,
                    _pad: [0; 2],
                };
                one(&[U, V, Density, UFaces, VFaces], Some(ParamBlock::new(&p)))
            })
            .collect(),
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
            vec![one(&[U, V, Density, Temperature, Curl, Solid], Some(ParamBlock::new(&p)))]
        }
        kernels::CLAMP_SPEED => {
            // Random faces in [-2, 2] against a limit of 1.5: some scaled, some kept.
            let p = ForceParams { max_speed: 1.5, clamp_speed: 1, ..ForceParams::default() };
            vec![one(&[U, V, UTmp, VTmp], Some(ParamBlock::new(&p)))]
        }
        kernels::DIFFUSE_VELOCITY => {
            let p = |no_slip| ParamBlock::new(&DiffuseParams { viscosity: 0.05, no_slip, held: 0, _pad: 0 });
            let fields = [U, V, UTmp, VTmp, UTmp2, VTmp2, UFaces, VFaces];
            vec![one(&fields, Some(p(1))), one(&fields, Some(p(0)))]
        }
        // Every solid insulating, and a fifth of the cells held.
        kernels::DIFFUSE_TEMPERATURE => [0, 1]
            .iter()
            .map(|&held| {
                let p = ParamBlock::new(&DiffuseParams { viscosity: 0.05, no_slip: 0, held, _pad: 0 });
                one(&[Temperature, TemperatureTmp, Scratch, UFaces, VFaces, Held], Some(p))
            })
            .collect(),
        _ => return None,
    })
}

/// The projection's sweeps, the conjugate gradient and the Poisson filter.
fn pressure_fixtures(f: &Fixture<'_>) -> Option<Vec<Schedule>> {
    use FieldId::*;
    let (grid, kernel, levels) = (f.grid, f.kernel, &f.levels);
    let one = |fields: &[FieldId], params: Option<ParamBlock>| f.one(fields, params);
    Some(match f.kernel {
        kernels::HOLD_HEAT => vec![one(&[Obstacles, Temperature, Held], None)],
        kernels::DIVERGENCE => vec![one(&[U, V, UFaces, VFaces, Divergence], None)],
        kernels::JACOBI => [0u32, 1]
            .iter()
            .map(|&z| {
                let p = JacobiParams { omega: 0.8, zero_initial: z, colour: 0, sweeps: 1 };
                one(&[Pressure, Divergence, PressureTmp, UFaces, VFaces], Some(ParamBlock::new(&p)))
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
                one(&[Pressure, Divergence, PressureTmp, UFaces, VFaces], Some(ParamBlock::new(&p)))
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
            let base = swirly_core::grid::pressure::mgpcg::cg_params(grid.nx, grid.ny);
            let count = base.count;
            let cg = |fields: &[FieldId], p: CgParams, extent: [u32; 2]| {
                single(grid, kernel, fields, Some(ParamBlock::new(&p)), extent)
            };
            let whole = [top.nx, top.ny];
            match kernel {
                kernels::CG_INIT => (0..2)
                    .map(|flag| {
                        cg(
                            &[Pressure, PressureLo, Divergence, Multigrid, UFaces, VFaces],
                            CgParams { flag, ..base },
                            whole,
                        )
                    })
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
                kernels::CG_APPLY => vec![cg(&[Multigrid, UFaces, VFaces], base, whole)],
                _ => (0..2).map(|slot| cg(&[Multigrid], CgParams { slot, ..base }, whole)).collect(),
            }
        }
        kernels::POISSON_TAPS => {
            let taps = [0.5, -1.0, 2.0, 0.25, 3.0, -0.75, 1.5, 0.125];
            [(swirly_core::grid::pressure::poisson_filter::TAPS_LEN - 8, 8), (5, 3)]
                .iter()
                .map(|&(offset, count)| {
                    let p = TapsParams { offset, count, _pad: [0; 2], taps };
                    single(grid, kernel, &[Multigrid], Some(ParamBlock::new(&p)), [1, 1])
                })
                .collect()
        }
        kernels::POISSON_ROWS | kernels::POISSON_COLS => {
            let cells = grid.nx * grid.ny;
            let (bank, tmp) = (0, swirly_core::grid::pressure::poisson_filter::TMP);
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
        _ => return None,
    })
}

/// Multigrid, the gradient subtraction, the residual and the solids' raster.
fn multigrid_fixtures(f: &Fixture<'_>) -> Option<Vec<Schedule>> {
    use FieldId::*;
    let (grid, kernel, levels) = (f.grid, f.kernel, &f.levels);
    let one = |fields: &[FieldId], params: Option<ParamBlock>| f.one(fields, params);
    let mg = |fields: &[FieldId], p: MgParams, over: &Level| f.mg(fields, p, over);
    let on = Level::params;
    let transfer = |a: &Level, c: &Level| a.transfer(c);
    Some(match f.kernel {
        kernels::MG_LOAD => [(LOAD_COPY, 0), (LOAD_COPY, 1), (LOAD_RESIDUAL, 0), (LOAD_RESIDUAL, 1)]
            .iter()
            .map(|&(colour, zero_initial)| {
                let p = MgParams { colour, zero_initial, ..on(&levels[0]) };
                mg(&[Pressure, PressureLo, Divergence, Multigrid, UFaces, VFaces], p, &levels[0])
            })
            .collect(),
        kernels::MG_SMOOTH => levels
            .iter()
            .take(2)
            .flat_map(|l| [(0, 1.0), (1, 1.0), (0, 1.3)].map(|(colour, omega)| (l, colour, omega)))
            .map(|(l, colour, omega)| mg(&[Multigrid, MgFaces], MgParams { colour, omega, ..on(l) }, l))
            .collect(),
        // Both colour orders, from zero or not, over-relaxed, on the first two levels; with the
        // coarse correction added first (the post-smoothing of a V-cycle).
        kernels::MG_SMOOTH2 | kernels::MG_SMOOTH2_SOLID => {
            const SMOOTH2_FIELDS: [FieldId; 7] = [Multigrid, Pressure, PressureLo, Divergence, UFaces, VFaces, MgFaces];
            let mut out: Vec<Schedule> = levels
                .iter()
                .take(2)
                .flat_map(|l| [(0, 0, 1.0), (1, 0, 1.15), (0, 1, 1.15)].map(|(colour, z, omega)| (l, colour, z, omega)))
                .map(|(l, colour, zero_initial, omega)| {
                    mg(&SMOOTH2_FIELDS, MgParams { colour, zero_initial, omega, ..on(l) }, l)
                })
                .collect();
            for w in levels.windows(2).take(2) {
                let p = MgParams { p: w[0].tmp, tmp: w[0].p, colour: 1, omega: 1.15, ..transfer(&w[0], &w[1]) };
                out.push(mg(&SMOOTH2_FIELDS, p, &w[0]));
                // And with the restriction afterwards (the pre-smoothing of a V-cycle), both
                // colour orders, from zero or not.
                use swirly_core::grid::pressure::multigrid::SMOOTH2_RESTRICT;
                for (colour, zero_initial) in [(SMOOTH2_RESTRICT, 1), (SMOOTH2_RESTRICT | 1, 0)] {
                    let p = MgParams { colour, zero_initial, omega: 1.15, ..transfer(&w[0], &w[1]) };
                    out.push(mg(&SMOOTH2_FIELDS, p, &w[0]));
                }
            }
            // Level 0's post-smoothing of a double-float solve, the result added to the pressure,
            // and its pre-smoothing, b computed from the pressure first.
            use swirly_core::grid::pressure::multigrid::{SMOOTH2_ACCUMULATE, SMOOTH2_LOAD_RESIDUAL, SMOOTH2_RESTRICT};
            if let [l0, l1, ..] = levels[..] {
                let colour = SMOOTH2_ACCUMULATE | 1;
                let p = MgParams { p: l0.tmp, tmp: l0.p, colour, omega: 1.15, ..transfer(&l0, &l1) };
                out.push(mg(&SMOOTH2_FIELDS, p, &l0));
                let colour = SMOOTH2_LOAD_RESIDUAL | SMOOTH2_RESTRICT;
                let p = MgParams { colour, zero_initial: 1, omega: 1.15, ..transfer(&l0, &l1) };
                out.push(mg(&SMOOTH2_FIELDS, p, &l0));
            }
            out
        }
        kernels::MG_RESTRICT => {
            levels.windows(2).take(2).map(|w| mg(&[Multigrid, MgFaces], transfer(&w[0], &w[1]), &w[1])).collect()
        }
        // Level 0 from the faces, then the next two levels from the finer ones.
        kernels::MG_WEIGHTS => std::iter::once(mg(&[UFaces, VFaces, MgFaces], on(&levels[0]), &levels[0]))
            .chain(
                levels
                    .windows(2)
                    .take(2)
                    .map(|w| mg(&[UFaces, VFaces, MgFaces], MgParams { colour: 1, ..transfer(&w[0], &w[1]) }, &w[1])),
            )
            .collect(),
        kernels::MG_PROLONG => {
            levels.windows(2).take(2).map(|w| mg(&[Multigrid], transfer(&w[0], &w[1]), &w[0])).collect()
        }
        // The cycle from the first two levels that fit in its workgroup memory (level 0 of most
        // test grids): plain, symmetric, and from zero.
        kernels::MG_COARSE => levels
            .iter()
            .filter(|l| swirly_core::grid::pressure::multigrid::fits_coarse(l))
            .take(2)
            // Colour bit 1: the coarsest level over-relaxed (an open side).
            .flat_map(|l| [(0, 0), (1, 0), (0, 1), (3, 0)].map(|(colour, zero_initial)| (l, colour, zero_initial)))
            .map(|(l, colour, zero_initial)| {
                let p = MgParams { colour, zero_initial, omega: 1.15, ..on(l) };
                let threads = swirly_core::grid::pressure::multigrid::COARSE_THREADS;
                single(grid, kernel, &[Multigrid, MgFaces], Some(ParamBlock::new(&p)), [threads, 1])
            })
            .collect(),
        // Every mode; the pair and the sum from MGPCG's x (its low part follows it).
        kernels::MG_STORE => {
            let x = swirly_core::grid::pressure::mgpcg::cg_layout(grid.nx, grid.ny).x;
            [STORE_COPY, STORE_PAIR, STORE_ADD]
                .iter()
                .map(|&colour| {
                    let p = MgParams { colour, p: x, ..on(&levels[0]) };
                    mg(&[Multigrid, Pressure, PressureLo], p, &levels[0])
                })
                .collect()
        }
        kernels::SUBTRACT_GRADIENT => vec![one(&[U, V, Pressure, PressureLo, UFaces, VFaces], None)],
        kernels::RESIDUAL => vec![one(&[Pressure, PressureLo, Divergence, Scratch, UFaces, VFaces], None)],
        kernels::RASTERISE_SOLIDS => (1..=3)
            .map(|fields| {
                let p = AdvectParams {
                    fields: fields | ADVECT_DYE | if fields == 2 { CARRY_FUEL } else { 0 },
                    ..advect(1)
                };
                one(&[Obstacles, UFaces, VFaces, Solid, Density, Temperature, Dye, Fuel], Some(ParamBlock::new(&p)))
            })
            .collect(),
        _ => return None,
    })
}

/// The spacing of f32 values at `x`.
fn ulp(x: f32) -> f32 {
    let a = x.abs();
    if a.is_finite() { a.next_up() - a } else { f32::INFINITY }
}

/// Three large random splats of every kind of amount, then 300 small ones.
fn random_splats(grid: &Grid, rng: &mut SplitMix64) -> Vec<Splat> {
    let big: Vec<Splat> = (0..3)
        .map(|k| Splat {
            center: [rng.next_f32() * grid.width(), rng.next_f32() * grid.height()],
            radius: (0.15 + 0.2 * rng.next_f32()) * grid.height(),
            falloff: swirly::Falloff::ALL[k % 3],
            velocity: [4.0 * rng.next_f32() - 2.0, 4.0 * rng.next_f32() - 2.0],
            density: rng.next_f32(),
            temperature: 2.0 * rng.next_f32(),
            dye: [rng.next_f32(), rng.next_f32(), rng.next_f32(), rng.next_f32()],
            fuel: if k == 1 { 0.0 } else { 1.5 * rng.next_f32() },
        })
        .collect();
    // Then more small splats than a GPU workgroup bins at once (one chunk per invocation),
    // some on the edges of 16-cell tiles and of the box (across a periodic seam).
    let h = grid.h;
    let small = (0..300).map(|k| {
        let edge = |n: u32, r: f32| match k % 5 {
            0 => (16 * (1 + (r * 4.0) as u32)).min(n) as f32 * h,
            1 => 0.02 * h,
            2 => n as f32 * h - 0.02 * h,
            _ => r * n as f32 * h,
        };
        let (rx, ry) = (rng.next_f32(), rng.next_f32());
        Splat {
            center: [edge(grid.nx, rx), if k % 3 == 0 { edge(grid.ny, ry) } else { ry * grid.height() }],
            radius: (0.3 + 2.2 * rng.next_f32()) * h,
            falloff: swirly::Falloff::ALL[k % 3],
            velocity: [rng.next_f32() - 0.5, rng.next_f32() - 0.5],
            density: 0.1 * rng.next_f32(),
            temperature: 0.1 * rng.next_f32(),
            dye: [0.1 * rng.next_f32(), 0.0, 0.1 * rng.next_f32(), 0.05],
            fuel: 0.1 * rng.next_f32(),
        }
    });
    big.into_iter().chain(small).collect()
}
