//! The grid model's schedules: the step, its split around a solve that stops at a tolerance,
//! the setup and the diagnostic passes. Each is built once from a grid and [`SimParams`] and
//! replayed; a backend decides nothing about the physics. The pressure solve itself comes from
//! [`crate::grid::pressure`].

use crate::grid::FieldId::{
    self, Back, Curl, Density, DensityCoarse, DensityTmp, Divergence, Dye, DyeBack, DyeTmp, Expansion, Fuel, FuelTmp,
    Held, Obstacles, Pressure, PressureLo, Scratch, Solid, Temperature, TemperatureTmp, U, UBack, UFaces, UTmp, UTmp2,
    V, VBack, VFaces, VTmp, VTmp2, Vacant, VacantOut0, VacantOut1, VacantOut2,
};
use crate::grid::Grid;
use crate::grid::builder::Builder;
use crate::grid::kernels::{
    ADVECT_CHANNELS, ADVECT_VELOCITY, APPLY_FORCES, BACK_CELLS, BACK_VELOCITY, BURN, CLAMP_SPEED, COARSE_DENSITY, CURL,
    CURVATURE, DIFFUSE_TEMPERATURE, DIFFUSE_VELOCITY, DIVERGENCE, EXPAND, FINE_SOOT, HOLD_HEAT, MG_COARSE,
    RASTERISE_SOLIDS, RESIDUAL, SHARP_CELLS, SHARP_VELOCITY, SPLAT, SPLAT_CELLS, SUBTRACT_GRADIENT, SURFACE_TENSION,
    TURBULENCE,
};
use crate::grid::params::{AdvectionScheme, Interpolation, PressureSolver, SimParams};
use crate::grid::pressure::{self, multigrid};
use crate::grid::uniforms::{
    ADVECT_DENSITY, ADVECT_DYE, ADVECT_TEMPERATURE, AMOUNT_DENSITY, AMOUNT_FUEL, AMOUNT_TEMPERATURE, AdvectParams,
    BurnParams, CARRY_FUEL, CHANNEL_Q0, CHANNEL_Q1, CHANNEL_RGBA, ChannelParams, DiffuseParams, DyeParams, ForceParams,
    INFLOW_AMBIENT, INFLOW_DYE, INFLOW_HEAT, INFLOW_SMOKE, MgParams, SHARP_BFECC, SHARP_CUBIC, SHARP_DYE,
    SHARP_MACCORMACK, SHARP_SCALAR, SharpParams, SplatParams, TensionParams, TurbulenceParams,
};
use swirly_ir::kernel::{Access, Domain};
use swirly_ir::schedule::{Op, ReduceOp, Schedule};

/// Result slot of [`diagnostics`]: max |∇·u| of the current velocity.
pub const SLOT_MAX_DIVERGENCE: usize = 0;
/// Result slot: ‖b − A p‖² of the last pressure solve.
pub const SLOT_RESIDUAL_SQ: usize = 1;
/// Result slot: ‖∇·u*‖² (the right-hand side of the last solve, in divergence units).
pub const SLOT_RHS_SQ: usize = 2;
/// Result slots of [`diagnostics`]: max |x| of each field of the state, in the order of
/// [`STATE_FIELDS`] (NaN or inf when the field holds one).
pub const SLOT_STATE_MAX: usize = 3;
/// The fields of the state whose max |x| [`diagnostics`] reduces, from [`SLOT_STATE_MAX`] on.
pub const STATE_FIELDS: [FieldId; 7] = [U, V, Pressure, Density, Temperature, Dye, Fuel];

/// One full step: advect velocity → advect cell fields (+ dissipation) → splats and emitters →
/// curl → forces (buoyancy, gravity, vorticity confinement, speed clamp) → implicit viscosity
/// → divergence → pressure solve → gradient subtraction.
///
/// The velocity is projected last, so it is divergence-free (to solver accuracy) between steps.
pub fn step(grid: &Grid, params: &SimParams) -> Schedule {
    let mut b = Builder::new(grid);
    push_step(&mut b, params);
    b.build()
}

/// The advection parameters of a scene (also what tells `rasterise_solids` its cell fields).
fn advect_params(grid: &Grid, params: &SimParams) -> AdvectParams {
    let mut fields = 0;
    // A finer density or dye is cleared inside obstacles by its own splat kernel.
    if params.fields.density && grid.density_factor <= 1 {
        fields |= ADVECT_DENSITY;
    }
    if params.fields.temperature {
        fields |= ADVECT_TEMPERATURE;
    }
    if params.fields.dye && grid.dye_factor <= 1 {
        fields |= ADVECT_DYE;
    }
    if params.fields.fuel {
        fields |= CARRY_FUEL;
    }
    AdvectParams {
        order: params.advection.backtrace.order(),
        fields,
        velocity_dissipation: params.dissipation.velocity,
        ambient_temperature: params.buoyancy.ambient_temperature,
    }
}

/// One advected cell field: it and its ping-pong partner, its lattice (cells per velocity
/// cell along each axis), its dissipation, what it relaxes to and what an inflow carries of it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Channel {
    field: FieldId,
    out: FieldId,
    rgba: bool,
    factor: u32,
    rate: f32,
    ambient: f32,
    inflow: u32,
    /// Which of a splat's amounts a scalar channel takes (an RGBA one takes the dye).
    amount: u32,
}

impl Channel {
    /// Whether `splat` adds to it with the velocity (density, temperature and dye on the
    /// velocity's cells); `splat_cells` takes every other.
    fn splats_with_velocity(&self) -> bool {
        self.factor == 1 && (self.rgba || self.amount != AMOUNT_FUEL)
    }
}

/// Channels of one lattice that share a dispatch: up to two scalars and an RGBA one.
struct Pack {
    factor: u32,
    scalars: Vec<Channel>,
    rgba: Option<Channel>,
}

/// `list` packed into as few [`Pack`]s as the kernels' slots allow, lattice by lattice in
/// the order of their first channel.
fn pack(list: &[Channel]) -> Vec<Pack> {
    let mut rest = list.to_vec();
    let mut packs = Vec::new();
    while let Some(first) = rest.first().copied() {
        let (mut scalars, mut rgba) = (Vec::new(), None);
        rest.retain(|c| {
            let taken = c.factor == first.factor && if c.rgba { rgba.is_none() } else { scalars.len() < 2 };
            match (taken, c.rgba) {
                (true, true) => rgba = Some(*c),
                (true, false) => scalars.push(*c),
                _ => {}
            }
            !taken
        });
        packs.push(Pack { factor: first.factor, scalars, rgba });
    }
    packs
}

/// The cell fields the scene carries, as channels of `advect_channels`. An advected field is
/// a row here (and its [`FieldId`] and dissipation): the kernels take it as they take these.
fn channels(grid: &Grid, params: &SimParams) -> Vec<Channel> {
    let (d, f) = (&params.dissipation, &params.fields);
    let amb = params.buoyancy.ambient_temperature;
    let row = |on: bool, (field, out), rgba, factor: u32, (rate, ambient), inflow, amount| {
        on.then_some(Channel { field, out, rgba, factor: factor.max(1), rate, ambient, inflow, amount })
    };
    let (density, temperature, fuel) = (AMOUNT_DENSITY, AMOUNT_TEMPERATURE, AMOUNT_FUEL);
    [
        row(f.density, (Density, DensityTmp), false, grid.density_factor, (d.density, 0.0), INFLOW_SMOKE, density),
        row(f.temperature, (Temperature, TemperatureTmp), false, 1, (d.temperature, amb), INFLOW_HEAT, temperature),
        row(f.dye, (Dye, DyeTmp), true, grid.dye_factor, (d.dye, 0.0), INFLOW_DYE, 0),
        row(f.fuel, (Fuel, FuelTmp), false, 1, (d.fuel, 0.0), INFLOW_AMBIENT, fuel),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// `channels` advected: those on one lattice packed into as few dispatches as the kernel's
/// slots allow (two scalars and an RGBA channel share one backtrace per cell).
fn push_advect_channels(b: &mut Builder, list: &[Channel], order: u32) {
    for Pack { factor, scalars, rgba } in pack(list) {
        let mut p = ChannelParams { order, factor, ..ChannelParams::default() };
        // An unused slot binds an empty field: reads may share one, each write has its own.
        let mut fields = [U, V, Vacant, Vacant, Vacant, VacantOut0, VacantOut1, VacantOut2];
        for (k, c) in scalars.iter().enumerate() {
            (fields[2 + k], fields[5 + k]) = (c.field, c.out);
            let q = (c.rate, c.ambient, c.inflow);
            if k == 0 {
                (p.q0_rate, p.q0_ambient, p.q0_inflow) = q;
            } else {
                (p.q1_rate, p.q1_ambient, p.q1_inflow) = q;
            }
            p.channels |= [CHANNEL_Q0, CHANNEL_Q1][k];
        }
        if let Some(c) = rgba {
            (fields[4], fields[7]) = (c.field, c.out);
            (p.rgba_rate, p.rgba_inflow) = (c.rate, c.inflow);
            p.channels |= CHANNEL_RGBA;
        }
        let (nx, ny) = (b.grid().nx * factor, b.grid().ny * factor);
        b.run_over(ADVECT_CHANNELS, &fields, Some(&p), [nx, ny]);
    }
}

/// The splats on the channels `splat` does not take with the velocity (fuel, a finer dye or
/// density), packed as [`push_advect_channels`] packs them.
fn push_splat_cells(b: &mut Builder, list: &[Channel]) {
    let rest: Vec<Channel> = list.iter().filter(|c| !c.splats_with_velocity()).copied().collect();
    for Pack { factor, scalars, rgba } in pack(&rest) {
        let mut p = SplatParams { factor, ..SplatParams::default() };
        // Every slot is written: each unused one binds an empty field of its own.
        let mut fields = [VacantOut0, VacantOut1, VacantOut2, Solid, UFaces, VFaces];
        for (k, c) in scalars.iter().enumerate() {
            fields[k] = c.field;
            if k == 0 {
                p.q0_amount = c.amount;
            } else {
                p.q1_amount = c.amount;
            }
            p.channels |= [CHANNEL_Q0, CHANNEL_Q1][k];
        }
        if let Some(c) = rgba {
            fields[2] = c.field;
            p.channels |= CHANNEL_RGBA;
        }
        let (nx, ny) = (b.grid().nx * factor, b.grid().ny * factor);
        b.run_over(SPLAT_CELLS, &fields, Some(&p), [nx, ny]);
    }
}

/// The sharper pass a scheme adds to the semi-Lagrangian one ([`SharpParams::scheme`]), if any.
fn sharp_scheme(scheme: AdvectionScheme, interpolation: Interpolation) -> Option<u32> {
    match (scheme, interpolation) {
        (AdvectionScheme::Maccormack, _) => Some(SHARP_MACCORMACK),
        (AdvectionScheme::Bfecc, _) => Some(SHARP_BFECC),
        (AdvectionScheme::SemiLagrangian, Interpolation::MonotoneCubic) => Some(SHARP_CUBIC),
        (AdvectionScheme::SemiLagrangian, Interpolation::Bilinear) => None,
    }
}

/// The sharper passes of one scalar (`q`, advected into `hat`) and, with `dye`, of the dye:
/// the round trip into the `back` fields, then the corrected value over the semi-Lagrangian
/// one. The cubic scheme needs no round trip.
fn push_sharp_cells(b: &mut Builder, p: SharpParams, q: FieldId, hat: FieldId) {
    if p.scheme != SHARP_CUBIC {
        b.run(BACK_CELLS, &[U, V, hat, Back, DyeTmp, DyeBack], Some(&p));
    }
    b.run(SHARP_CELLS, &[U, V, q, Back, hat, Dye, DyeBack, DyeTmp], Some(&p));
}

fn push_step(b: &mut Builder, params: &SimParams) {
    push_advection(b, params);
    push_solids(b, params);
    push_splats(b, params);
    push_burn(b, params);
    push_heat(b, params);
    push_forces(b, params);
    push_viscosity(b, params);
    push_projection(b, params);
}

/// Velocity, then every carried cell field ([`channels`], one backtrace per lattice cell for
/// up to three), those on the velocity's cells sharpened where the scheme says.
fn push_advection(b: &mut Builder, params: &SimParams) {
    let advect = advect_params(b.grid(), params);
    let interpolation = params.advection.interpolation;
    let sharp = |scheme: u32, rate: f32, ambient: f32, fields: u32| SharpParams {
        order: advect.order,
        scheme,
        fields,
        rate,
        ambient,
        dye_rate: params.dissipation.dye,
        _pad: [0; 2],
    };
    b.run(ADVECT_VELOCITY, &[U, V, UTmp, VTmp], Some(&advect));
    if let Some(scheme) = sharp_scheme(params.advection.velocity_scheme(), interpolation) {
        let p = sharp(scheme, advect.velocity_dissipation, 0.0, 0);
        if scheme != SHARP_CUBIC {
            b.run(BACK_VELOCITY, &[U, V, UTmp, VTmp, UBack, VBack], Some(&p));
        }
        b.run(SHARP_VELOCITY, &[U, V, UBack, VBack, UTmp, VTmp], Some(&p));
    }
    b.swap(U, UTmp);
    b.swap(V, VTmp);
    let list = channels(b.grid(), params);
    push_advect_channels(b, &list, advect.order);
    if let Some(scheme) = sharp_scheme(params.advection.scheme, interpolation) {
        // The channels on the velocity's cells, each scalar in turn; the dye rides with the
        // first (one backtrace serves both), or alone.
        let coarse = list.iter().filter(|c| c.factor == 1);
        let mut dye = if coarse.clone().any(|c| c.rgba) { SHARP_DYE } else { 0 };
        for c in coarse.filter(|c| !c.rgba) {
            push_sharp_cells(b, sharp(scheme, c.rate, c.ambient, SHARP_SCALAR | dye), c.field, c.out);
            dye = 0;
        }
        if dye != 0 {
            push_sharp_cells(b, sharp(scheme, 0.0, 0.0, dye), Vacant, VacantOut0);
        }
    }
    for c in &list {
        b.swap(c.field, c.out);
    }
}

/// Buoyancy, gravity and vorticity confinement, turbulence, surface tension, the speed clamp.
fn push_forces(b: &mut Builder, params: &SimParams) {
    let buoy = &params.buoyancy;
    let forces = ForceParams {
        gravity: params.gravity,
        density_weight: if params.fields.density { buoy.density_weight } else { 0.0 },
        temperature_lift: if params.fields.temperature { buoy.temperature_lift } else { 0.0 },
        ambient_temperature: buoy.ambient_temperature,
        vorticity: params.vorticity,
        max_speed: params.max_speed.unwrap_or(0.0),
        clamp_speed: u32::from(params.max_speed.is_some()),
    };
    let rho = density_read(b.grid(), params);
    let any_force = forces.gravity != [0.0, 0.0]
        || forces.density_weight != 0.0
        || forces.temperature_lift != 0.0
        || forces.vorticity != 0.0;
    if forces.vorticity != 0.0 {
        b.run_plain(CURL, &[U, V, Curl]);
    }
    if any_force {
        b.run(APPLY_FORCES, &[U, V, rho, Temperature, Curl, Solid], Some(&forces));
    }
    push_turbulence(b, params);
    if params.surface_tension > 0.0 {
        // `scratch` holds the curvature until the force is applied (no solve between).
        b.run_plain(CURVATURE, &[rho, Scratch]);
        let p = TensionParams { strength: params.surface_tension, _pad: [0; 3] };
        b.run(SURFACE_TENSION, &[rho, Scratch, U, V], Some(&p));
    }
    if forces.clamp_speed != 0 {
        // The speed, not each component: a pass of its own (a face reads its neighbours').
        b.run(CLAMP_SPEED, &[U, V, UTmp, VTmp], Some(&forces));
        b.swap(U, UTmp);
        b.swap(V, VTmp);
    }
}

/// Implicit viscosity: Jacobi iterates alternating between the two scratch pairs.
fn push_viscosity(b: &mut Builder, params: &SimParams) {
    if params.viscosity > 0.0 {
        let no_slip = u32::from(params.obstacle_slip == crate::grid::params::Slip::NoSlip);
        let p = DiffuseParams { viscosity: params.viscosity, no_slip, held: 0, _pad: 0 };
        // The right-hand side stays in u/v; iterates alternate between the two scratch pairs.
        let pairs = [(UTmp, VTmp), (UTmp2, VTmp2)];
        let mut src = (U, V);
        for k in 0..params.viscosity_iterations as usize {
            let dst = pairs[k % 2];
            b.run(DIFFUSE_VELOCITY, &[U, V, src.0, src.1, dst.0, dst.1, UFaces, VFaces], Some(&p));
            src = dst;
        }
        b.swap(U, src.0);
        b.swap(V, src.1);
    }
}

/// With obstacles, where they stand at the step's end: the faces' open fractions and solid
/// velocities, the cells' solid fractions, the cell fields of cells wholly inside cleared.
fn push_solids(b: &mut Builder, params: &SimParams) {
    if b.grid().solids {
        let advect = advect_params(b.grid(), params);
        let rho = density_read(b.grid(), params);
        b.run(RASTERISE_SOLIDS, &[Obstacles, UFaces, VFaces, Solid, rho, Temperature, Dye, Fuel], Some(&advect));
        if b.grid().held {
            b.run_plain(HOLD_HEAT, &[Obstacles, Temperature, Held]);
        }
        if matches!(params.pressure.solver, PressureSolver::Multigrid | PressureSolver::Mgpcg) {
            multigrid::push_faces(b);
        }
    }
}

/// How the dye lives: its grid's factor, backtrace order and dissipation.
fn dye_params(grid: &Grid, params: &SimParams) -> DyeParams {
    DyeParams {
        order: params.advection.backtrace.order(),
        factor: grid.dye_factor,
        dissipation: params.dissipation.dye,
        _pad: 0,
    }
}

/// A finer density's parameters (its factor, backtrace order and dissipation), `None` when
/// the density lives on the velocity's grid or not at all.
fn fine_density_params(grid: &Grid, params: &SimParams) -> Option<DyeParams> {
    (params.fields.density && grid.density_factor > 1).then(|| DyeParams {
        order: params.advection.backtrace.order(),
        factor: grid.density_factor,
        dissipation: params.dissipation.density,
        _pad: 0,
    })
}

/// The density the velocity's cells read: `density`, or with a finer one its mean over each
/// cell (`density_coarse`, rebuilt after the splats; what `splat` and `rasterise_solids`
/// write there is overwritten by it).
fn density_read(grid: &Grid, params: &SimParams) -> FieldId {
    if fine_density_params(grid, params).is_some() { DensityCoarse } else { Density }
}

/// The step's splats (and emitters): with the velocity, the density, temperature and dye of
/// the velocity's cells (`splat`); the other channels on their lattices (`splat_cells`: fuel,
/// a finer dye or density, cleared first inside solids as `rasterise_solids` clears the other
/// cell fields); then a finer density averaged onto the velocity's cells.
fn push_splats(b: &mut Builder, params: &SimParams) {
    let dye = dye_params(b.grid(), params);
    let rho = density_read(b.grid(), params);
    b.run(SPLAT, &[U, V, rho, Temperature, Dye, UFaces, VFaces], Some(&dye));
    push_splat_cells(b, &channels(b.grid(), params));
    if let Some(p) = fine_density_params(b.grid(), params) {
        // `scratch` keeps the mean until combustion's soot is carried back (`fine_soot`).
        b.run(COARSE_DENSITY, &[Density, DensityCoarse, Scratch], Some(&p));
    }
}

/// The turbulence's parameters in the kernels' layout: on a periodic axis the lattice's scale
/// is rounded so that a whole number of its cells spans the box.
pub(crate) fn turbulence_params(grid: &Grid, params: &SimParams) -> TurbulenceParams {
    use crate::grid::params::TurbulenceMask;
    let t = &params.turbulence;
    let axis = |len: f32, periodic: bool| -> (f32, u32) {
        if periodic {
            let n = (len / t.scale).round().max(1.0);
            (n / len, n as u32)
        } else {
            (1.0 / t.scale, 0)
        }
    };
    let (sx, px) = axis(grid.width(), grid.boundary_x == crate::frame::Boundary::Periodic);
    let (sy, py) = axis(grid.height(), grid.boundary_y == crate::frame::Boundary::Periodic);
    let (mask, offset) = match t.mask {
        TurbulenceMask::None => (0, 0.0),
        TurbulenceMask::Density => (1, 0.0),
        TurbulenceMask::Temperature => (1, params.buoyancy.ambient_temperature),
    };
    TurbulenceParams {
        amplitude: t.amplitude,
        speed: t.speed,
        inv_scale: [sx, sy],
        period: [px, py],
        octaves: t.octaves,
        mask,
        mask_offset: offset,
        mask_full: t.mask_full,
        _pad: [0; 2],
    }
}

/// Curl-noise turbulence, after the other forces.
fn push_turbulence(b: &mut Builder, params: &SimParams) {
    use crate::grid::params::TurbulenceMask;
    if !params.turbulence.on() {
        return;
    }
    let p = turbulence_params(b.grid(), params);
    let mask = if params.turbulence.mask == TurbulenceMask::Temperature {
        Temperature
    } else {
        density_read(b.grid(), params)
    };
    b.run(TURBULENCE, &[U, V, mask, UFaces, VFaces], Some(&p));
}

/// The combustion's parameters in the kernels' layout.
fn burn_params(params: &SimParams) -> BurnParams {
    let c = &params.combustion;
    BurnParams { rate: c.rate, ignition: c.ignition, heat: c.heat, soot: c.soot, expansion: c.expansion, _pad: [0; 3] }
}

/// Combustion after the splats (so that fuel and sparks added this step burn in it) and before
/// heat diffusion and the forces (so that buoyancy lifts the heat it releases).
fn push_burn(b: &mut Builder, params: &SimParams) {
    if params.burns() {
        let p = burn_params(params);
        b.run(BURN, &[Fuel, Temperature, density_read(b.grid(), params), Expansion], Some(&p));
        if let Some(fine) = fine_density_params(b.grid(), params).filter(|_| p.soot != 0.0) {
            let (x, y) = b.grid().density_dims();
            b.run_over(FINE_SOOT, &[Density, DensityCoarse, Scratch], Some(&fine), [x, y]);
        }
    }
}

/// Implicit heat diffusion: Jacobi sweeps with the right-hand side in `temperature`, the
/// iterate alternating between `scratch` and `temperature_tmp` so that the last lands in the
/// latter, which then becomes the temperature (`scratch` is transient: it never becomes state).
fn push_heat(b: &mut Builder, params: &SimParams) {
    if params.thermal_diffusivity <= 0.0 || !params.fields.temperature {
        return;
    }
    let held = u32::from(b.grid().held);
    let p = DiffuseParams { viscosity: params.thermal_diffusivity, no_slip: 0, held, _pad: 0 };
    let sweeps = params.thermal_iterations as usize;
    let mut src = Temperature;
    for k in 0..sweeps {
        let dst = if (sweeps - 1 - k).is_multiple_of(2) { TemperatureTmp } else { Scratch };
        b.run(DIFFUSE_TEMPERATURE, &[Temperature, src, dst, UFaces, VFaces, Held], Some(&p));
        src = dst;
    }
    b.swap(Temperature, TemperatureTmp);
}

/// Divergence, the pressure solve, and the gradient subtraction.
fn push_projection(b: &mut Builder, params: &SimParams) {
    b.run_plain(DIVERGENCE, &[U, V, UFaces, VFaces, Divergence]);
    if params.expands() {
        b.run_plain(EXPAND, &[Expansion, Divergence]);
    }
    if params.pressure.solver == PressureSolver::Relaxation {
        // The relaxation corrects the velocity itself; its pressure starts at zero each step.
        pressure::push_solve(b, &crate::grid::params::Pressure { warm_start: false, ..params.pressure });
        return;
    }
    pressure::push_solve(b, &params.pressure);
    b.run_plain(SUBTRACT_GRADIENT, &[U, V, Pressure, PressureLo, UFaces, VFaces]);
}

/// A step split around its pressure solve, for solves that stop at a tolerance: everything up
/// to the divergence, and the gradient subtraction. Run the first, then [`solve`] chunks
/// (checking [`residual`]), then the second.
pub(crate) fn step_split(grid: &Grid, params: &SimParams) -> (Schedule, Schedule) {
    let mut full = Builder::new(grid);
    push_step(&mut full, params);
    let divergence = (full.ops().iter())
        .rposition(|op| matches!(op, Op::Dispatch(d) if d.kernel == DIVERGENCE || d.kernel == EXPAND))
        .unwrap_or(0);
    let mut before = Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]);
    for op in &full.ops()[..=divergence] {
        before.push(op.clone());
    }
    let mut after = Builder::new(grid);
    if params.pressure.solver != PressureSolver::Relaxation {
        after.run_plain(SUBTRACT_GRADIENT, &[U, V, Pressure, PressureLo, UFaces, VFaces]);
    }
    (before.build(), after.build())
}

/// `iterations` of the pressure solver alone, from the current pressure (`warm`) or zero; the
/// result ends in `pressure`.
pub fn solve(grid: &Grid, pressure: &crate::grid::params::Pressure, iterations: u32, warm: bool) -> Schedule {
    let mut b = Builder::new(grid);
    pressure::push_solve(&mut b, &crate::grid::params::Pressure { iterations, warm_start: warm, ..*pressure });
    b.build()
}

/// `sweeps` warm-started pressure sweeps of `solver` and nothing else (the Jacobi benchmark).
/// `omega: None` takes the solver's default.
pub fn jacobi_sweeps(grid: &Grid, solver: PressureSolver, omega: Option<f32>, sweeps: u32) -> Schedule {
    let pressure =
        crate::grid::params::Pressure { solver, iterations: sweeps, omega, warm_start: true, ..Default::default() };
    solve(grid, &pressure, sweeps, true)
}

/// [`SLOT_RESIDUAL_SQ`] and [`SLOT_RHS_SQ`] of the current pressure and divergence (writes
/// only `scratch`).
pub fn residual(grid: &Grid) -> Schedule {
    let mut b = Builder::new(grid);
    push_residual(&mut b);
    b.build()
}

fn push_residual(b: &mut Builder) {
    b.run_plain(RESIDUAL, &[Pressure, PressureLo, Divergence, Scratch, UFaces, VFaces]);
    b.reduce(Scratch, ReduceOp::SumSquares, SLOT_RESIDUAL_SQ);
    b.reduce(Divergence, ReduceOp::SumSquares, SLOT_RHS_SQ);
}

/// What a solver needs written once before its first solve (the Poisson filter's taps; empty
/// for the other solvers). [`initialize`] includes it.
pub fn setup(grid: &Grid, params: &SimParams) -> Schedule {
    let mut b = Builder::new(grid);
    push_setup(&mut b, params);
    b.build()
}

fn push_setup(b: &mut Builder, params: &SimParams) {
    let pr = &params.pressure;
    if pr.solver == PressureSolver::PoissonFilter {
        let omega = pr.omega_for(b.grid().longest_side());
        pressure::poisson_filter::push_setup(b, pr.iterations, omega, pr.rank);
    }
}

/// What a scene runs once at its start: the solver's setup, the initial splats, then a
/// projection so the first step starts from a divergence-free velocity.
pub fn initialize(grid: &Grid, params: &SimParams) -> Schedule {
    let mut b = Builder::new(grid);
    push_setup(&mut b, params);
    push_solids(&mut b, params);
    push_splats(&mut b, params);
    push_projection(&mut b, params);
    b.build()
}

/// Only the obstacles' rasterisation (nothing without obstacles).
pub fn solids(grid: &Grid, params: &SimParams) -> Schedule {
    let mut b = Builder::new(grid);
    push_solids(&mut b, params);
    b.build()
}

/// Only the projection of the current velocity (tests and the solver benchmarks).
pub fn projection(grid: &Grid, params: &SimParams) -> Schedule {
    let mut b = Builder::new(grid);
    push_projection(&mut b, params);
    b.build()
}

/// The vorticity of the current velocity into `curl`. The step computes `curl` only as scratch
/// of vorticity confinement (and before the forces and the projection change the velocity);
/// readers of the field run this first.
pub fn curl(grid: &Grid) -> Schedule {
    let mut b = Builder::new(grid);
    b.run_plain(CURL, &[U, V, Curl]);
    b.build()
}

/// Diagnostics of the current state: [`SLOT_MAX_DIVERGENCE`], [`SLOT_RESIDUAL_SQ`],
/// [`SLOT_RHS_SQ`] and max |x| of each of [`STATE_FIELDS`] from [`SLOT_STATE_MAX`] on. Writes
/// only the `scratch` field.
pub fn diagnostics(grid: &Grid) -> Schedule {
    let mut b = Builder::new(grid);
    b.run_plain(DIVERGENCE, &[U, V, UFaces, VFaces, Scratch]);
    b.reduce(Scratch, ReduceOp::MaxAbs, SLOT_MAX_DIVERGENCE);
    push_residual(&mut b);
    push_state_max(&mut b);
    b.build()
}

/// Only max |x| of each of [`STATE_FIELDS`] from [`SLOT_STATE_MAX`] on: what tells a blown-up or
/// runaway state, at the cost of one read of each field.
pub(crate) fn state_check(grid: &Grid) -> Schedule {
    let mut b = Builder::new(grid);
    push_state_max(&mut b);
    b.build()
}

fn push_state_max(b: &mut Builder) {
    for (k, field) in STATE_FIELDS.into_iter().enumerate() {
        b.reduce(field, ReduceOp::MaxAbs, SLOT_STATE_MAX + k);
    }
}

/// Compulsory memory traffic of one execution of `schedule` on `grid`, in bytes: every binding
/// of every dispatch read once (and written once if the kernel writes it), fields that a
/// kernel skips (the channels an `advect_channels` dispatch leaves unused) left out, and one read per reduction.
/// Stencil neighbours are assumed to hit in cache. Divided by the time it gives the effective
/// bandwidth that `fluid bench` compares with the device's copy bandwidth.
pub fn bytes_moved(schedule: &Schedule, grid: &Grid) -> u64 {
    // The obstacles' fields exist only with obstacles (bound to optional slots otherwise).
    let geometry = |f: FieldId| matches!(f, UFaces | VFaces | Solid | Obstacles | FieldId::MgFaces);
    let absent = |id: &swirly_ir::ResourceId| {
        FieldId::from_resource(*id).is_some_and(|f| f.is_vacant() || (!grid.solids && geometry(f)))
    };
    let field_bytes = |id: swirly_ir::ResourceId| {
        FieldId::from_resource(id).filter(|f| grid.solids || !geometry(*f)).map_or(0, |f| grid.len(f) as u64 * 4)
    };
    let mut total = 0u64;
    for op in schedule.ops() {
        match op {
            Op::Dispatch(d) if d.kernel == MG_COARSE => {
                // Every array of every level it cycles, read and written once, and with solids
                // each level's two face weights read once.
                if let Some(p) = d.params::<MgParams>() {
                    for l in multigrid::levels_from(p.nx, p.ny, p.b) {
                        total += (2 * 3 + if grid.solids { 2 } else { 0 }) * u64::from(l.cells()) * 4;
                    }
                }
            }
            Op::Dispatch(d) if d.kernel == ADVECT_CHANNELS => {
                // The velocity, and each channel the dispatch carries, once.
                let on = d.params::<ChannelParams>().map_or(0, |p| p.channels);
                let bits =
                    [u32::MAX, u32::MAX, CHANNEL_Q0, CHANNEL_Q1, CHANNEL_RGBA, CHANNEL_Q0, CHANNEL_Q1, CHANNEL_RGBA];
                for (bit, id) in bits.iter().zip(&d.resources) {
                    if on & bit != 0 {
                        total += field_bytes(*id);
                    }
                }
            }
            Op::Dispatch(d) if d.kernel.domain == Domain::Given => {
                // Kernels over a multigrid level: each slot read (and written) once over the
                // level's cells.
                let cells = u64::from(d.extent[0]) * u64::from(d.extent[1]) * 4;
                for (slot, id) in d.kernel.bindings.iter().zip(&d.resources) {
                    if !absent(id) {
                        total += if slot.access == Access::ReadWrite { 2 * cells } else { cells };
                    }
                }
            }
            Op::Dispatch(d) => {
                // A fused multi-sweep dispatch moves the data of one sweep.
                let burn = d.params::<BurnParams>().filter(|_| d.kernel == BURN);
                for (slot, id) in d.kernel.bindings.iter().zip(&d.resources) {
                    if let Some(p) = burn
                        && ((slot.name == "density" && p.soot == 0.0)
                            || (slot.name == "expansion" && p.expansion == 0.0))
                    {
                        continue;
                    }
                    let bytes = field_bytes(*id);
                    total += if slot.access == Access::ReadWrite { 2 * bytes } else { bytes };
                }
            }
            Op::Reduce { resource, .. } => total += field_bytes(*resource),
            Op::Swap(..) => {}
        }
    }
    total
}

#[cfg(test)]
#[path = "tests/step.rs"]
mod tests;
