//! Simulation parameters. Every field documents its default, and `impl Default` matches.
//!
//! Units: lengths in world units (a cell is `grid.h` wide), time in seconds, velocities in world
//! units per second. Pressure is scaled for unit density, so projection does `u -= dt ∇p`.

use serde::{Deserialize, Serialize};

use crate::grid::FieldId;

mod advection;
mod pressure;
mod sides;
mod validate;

pub use advection::{Advection, AdvectionScheme, Backtrace, Interpolation};
pub use pressure::{Precision, Pressure, PressureSolver};
pub use sides::{Boundaries, Profile, SideSpec, SideType, Slip};
pub use validate::MAX_ITERATIONS;

/// Everything that shapes one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimParams {
    /// Time step, seconds (default: `1/60`).
    pub dt: f32,
    /// Per-field dissipation rates (default: all `0`, nothing fades).
    pub dissipation: Dissipation,
    /// Vorticity confinement strength ε; the force is `ε·h·(N × ω)` (default: `0`, off).
    pub vorticity: f32,
    /// Buoyancy: smoke weight and heat lift (default: all `0`, off).
    pub buoyancy: Buoyancy,
    /// Uniform body acceleration (x, y), world units/s² (default: `[0, 0]`). In a closed box it is
    /// balanced by pressure; for smoke in air leave it zero and use `buoyancy`.
    pub gravity: [f32; 2],
    /// Largest speed after forces, world units/s: each face's velocity (its own component and
    /// the other averaged from the faces around it) is scaled down to it, so a diagonal flow
    /// is held to it too (default: none, no limit).
    pub max_speed: Option<f32>,
    /// Largest Courant number a step may take (cells the fastest face moves in it): a step
    /// whose flow would move farther is split into as many equal substeps as that needs, at
    /// most `max_substeps` (default: none, every step whole). Measuring the flow before each
    /// step waits for the device.
    pub cfl: Option<f32>,
    /// Most substeps `cfl` may split a step into (default: `8`; 1 to 64).
    pub max_substeps: u32,
    /// Kinematic viscosity ν, world units²/s, solved implicitly (default: `0`, inviscid).
    pub viscosity: f32,
    /// Jacobi sweeps of the implicit viscosity solve (default: `20`; at most
    /// [`MAX_ITERATIONS`]).
    pub viscosity_iterations: u32,
    /// Thermal diffusivity κ, world units²/s: the temperature diffuses, solved implicitly
    /// (default: `0`, none). Walls, open sides and obstacles insulate; an inflow holds the
    /// temperature it carries.
    pub thermal_diffusivity: f32,
    /// Jacobi sweeps of the implicit heat diffusion (default: `20`; at most
    /// [`MAX_ITERATIONS`]).
    pub thermal_iterations: u32,
    /// How obstacle surfaces hold the fluid in the viscous step (default: `no-slip`).
    pub obstacle_slip: Slip,
    /// How quantities are carried by the flow (default: semi-Lagrangian, RK2, bilinear).
    pub advection: Advection,
    /// The projection (default: weighted Jacobi, 40 sweeps, ω = 0.9, warm start).
    pub pressure: Pressure,
    /// Boundary of each axis (default: `wall` on both).
    pub boundary: Boundaries,
    /// Which cell fields the step carries (default: density, temperature and dye; no fuel).
    pub fields: ActiveFields,
    /// Combustion: fuel burning above an ignition temperature (default: off).
    pub combustion: Combustion,
    /// Curl-noise turbulence (default: off).
    pub turbulence: Turbulence,
    /// Surface tension of the density, σ (world units³/s²): the force `σ κ ∇ρ` with the
    /// curvature `κ = −∇·(∇ρ/|∇ρ|)` of the density's level sets pulls blobs round (default:
    /// `0`, off).
    pub surface_tension: f32,
}

impl Default for SimParams {
    fn default() -> Self {
        SimParams {
            dt: 1.0 / 60.0,
            dissipation: Dissipation::default(),
            vorticity: 0.0,
            buoyancy: Buoyancy::default(),
            gravity: [0.0, 0.0],
            max_speed: None,
            cfl: None,
            max_substeps: 8,
            viscosity: 0.0,
            viscosity_iterations: 20,
            thermal_diffusivity: 0.0,
            thermal_iterations: 20,
            obstacle_slip: Slip::NoSlip,
            advection: Advection::default(),
            pressure: Pressure::default(),
            boundary: Boundaries::default(),
            fields: ActiveFields::default(),
            combustion: Combustion::default(),
            turbulence: Turbulence::default(),
            surface_tension: 0.0,
        }
    }
}

/// Dissipation rates, 1/s: each step multiplies the field by `exp(−rate·dt)`, so the fade does not
/// depend on the step size. Temperature relaxes towards the ambient temperature instead of zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Dissipation {
    /// Velocity (default: `0`).
    pub velocity: f32,
    /// Density (default: `0`).
    pub density: f32,
    /// Temperature (default: `0`).
    pub temperature: f32,
    /// Dye (default: `0`).
    pub dye: f32,
    /// Fuel (default: `0`).
    pub fuel: f32,
}

impl Dissipation {
    /// Every rate with its key under `params.dissipation` (what validation checks).
    pub fn rates(&self) -> [(&'static str, f32); 5] {
        [
            ("velocity", self.velocity),
            ("density", self.density),
            ("temperature", self.temperature),
            ("dye", self.dye),
            ("fuel", self.fuel),
        ]
    }
}

/// Combustion. Where the temperature is at or above `ignition`, a fraction `1 − exp(−rate·dt)`
/// of a cell's fuel burns each step (fuel decays as `exp(−rate·t)` while it is hot enough);
/// each unit burnt adds `heat` to the temperature, `soot` to the density (smoke) and, with
/// `expansion`, that much volume per unit (a divergence source the projection honours, so a
/// flame front pushes outward). Fuel comes from splats and emitters (`fuel`), needs
/// `params.fields.fuel`, and is carried by the flow like the other cell fields.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Combustion {
    /// Fraction of the fuel burnt per second above ignition, 1/s (default: `0`, no burning).
    pub rate: f32,
    /// Temperature at and above which fuel burns (default: `0.5`).
    pub ignition: f32,
    /// Temperature added per unit of fuel burnt (default: `1`).
    pub heat: f32,
    /// Density (smoke) made per unit of fuel burnt (default: `0`).
    pub soot: f32,
    /// Volume made per unit of fuel burnt, world units² (default: `0`, none). Needs an open
    /// side for the gas to leave by.
    pub expansion: f32,
}

impl Default for Combustion {
    fn default() -> Self {
        Combustion { rate: 0.0, ignition: 0.5, heat: 1.0, soot: 0.0, expansion: 0.0 }
    }
}

/// Curl-noise turbulence: a force that is the curl of a stream function made of value noise
/// (a hashed lattice in x, y and time, smoothly interpolated, in `octaves` of doubling
/// frequency and halving weight), so that on its own it neither compresses nor expands the
/// fluid. The noise evolves in time at `speed`; on a periodic axis it wraps with the box
/// (its scale rounded so that a whole number of lattice cells spans the axis). It may be
/// weighted by the smoke or the heat, so that it stirs only where they are.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Turbulence {
    /// Acceleration scale, world units/s² (default: `0`, off).
    pub amplitude: f32,
    /// Size of the largest eddies (one lattice cell of the first octave), world units
    /// (default: `0.1`).
    pub scale: f32,
    /// How fast the noise changes: lattice cells of its time axis per second (default: `1`;
    /// `0` freezes it).
    pub speed: f32,
    /// Octaves, 1 to 4 (default: `2`).
    pub octaves: u32,
    /// Where it acts (default: `none`, everywhere).
    pub mask: TurbulenceMask,
    /// The mask field's value (above ambient, for temperature) at which the force is whole;
    /// less weakens it in proportion (default: `1`).
    pub mask_full: f32,
}

impl Default for Turbulence {
    fn default() -> Self {
        Turbulence { amplitude: 0.0, scale: 0.1, speed: 1.0, octaves: 2, mask: TurbulenceMask::None, mask_full: 1.0 }
    }
}

impl Turbulence {
    /// Whether it acts.
    pub fn on(&self) -> bool {
        self.amplitude != 0.0
    }
}

/// Which field weights the turbulence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TurbulenceMask {
    /// Everywhere alike.
    #[default]
    None,
    /// In proportion to the density (where the smoke is).
    Density,
    /// In proportion to the temperature above ambient (where the heat is).
    Temperature,
}

impl Combustion {
    /// Whether anything burns.
    pub fn on(&self) -> bool {
        self.rate > 0.0
    }
}

impl SimParams {
    /// Whether the step burns fuel (combustion on, with fuel to burn).
    pub fn burns(&self) -> bool {
        self.combustion.on() && self.fields.fuel
    }

    /// Whether the burning makes volume (the `expansion` field and the `expand` pass).
    pub fn expands(&self) -> bool {
        self.burns() && self.combustion.expansion > 0.0
    }
}

/// Boussinesq buoyancy along +y: `a = −density_weight·ρ + temperature_lift·(T − ambient)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Buoyancy {
    /// Downward acceleration per unit density (default: `0`).
    pub density_weight: f32,
    /// Upward acceleration per degree above ambient (default: `0`).
    pub temperature_lift: f32,
    /// Ambient temperature; also the initial temperature everywhere (default: `0`).
    pub ambient_temperature: f32,
}

/// Which cell fields are carried by the flow each step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ActiveFields {
    /// Density (default: `true`).
    pub density: bool,
    /// Temperature (default: `true`).
    pub temperature: bool,
    /// RGBA dye (default: `true`).
    pub dye: bool,
    /// Fuel for combustion (default: `false`).
    pub fuel: bool,
}

impl Default for ActiveFields {
    fn default() -> Self {
        ActiveFields { density: true, temperature: true, dye: true, fuel: false }
    }
}

impl ActiveFields {
    /// `splat` without the amounts for the fields these do not carry: what
    /// `Simulation::splat` accepts in a scene that carries only some of density,
    /// temperature and dye.
    pub fn carried(&self, splat: crate::splat::Splat) -> crate::splat::Splat {
        crate::splat::Splat {
            density: if self.density { splat.density } else { 0.0 },
            temperature: if self.temperature { splat.temperature } else { 0.0 },
            dye: if self.dye { splat.dye } else { [0.0; 4] },
            fuel: if self.fuel { splat.fuel } else { 0.0 },
            ..splat
        }
    }

    /// Whether the step carries `field`: false only for a density, temperature, dye or fuel
    /// switched off here (nothing moves or fades it; it holds only what splats put there).
    pub fn carries(&self, field: FieldId) -> bool {
        match field {
            FieldId::Density => self.density,
            FieldId::Temperature => self.temperature,
            FieldId::Dye => self.dye,
            FieldId::Fuel => self.fuel,
            _ => true,
        }
    }

    /// Why `field` is empty, when the step does not carry it: e.g. "the step does not carry dye
    /// (params.fields.dye = false)", for an error about a setting that acts on it.
    pub(crate) fn not_carried(&self, field: FieldId) -> Option<String> {
        (!self.carries(field)).then(|| format!("the step does not carry {0} (params.fields.{0} = false)", field.name()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{Boundary, Side};

    #[test]
    fn defaults_are_valid() {
        SimParams::default().validate().expect("defaults validate");
    }

    /// The documented precisions: multigrid in double-float unless told, MGPCG always, the
    /// rest in f32.
    #[test]
    fn each_solver_keeps_its_documented_precision() {
        use PressureSolver::*;
        let of = |solver, precision| Pressure { solver, precision, ..Pressure::default() }.precision();
        assert_eq!(of(Multigrid, None), Precision::DoubleFloat);
        assert_eq!(of(Multigrid, Some(Precision::Single)), Precision::Single);
        assert_eq!(of(Mgpcg, None), Precision::DoubleFloat);
        for solver in [Jacobi, JacobiMultisweep, Sor, PoissonFilter, Relaxation] {
            assert_eq!(of(solver, None), Precision::Single, "{solver:?}");
        }
    }

    #[test]
    fn a_wall_holds_a_temperature_only_through_heat_diffusion() {
        let held = SideSpec { temperature: Some(1.0), ..SideSpec::new(SideType::Wall) };
        let mut p = SimParams::default();
        p.boundary.left = Some(held);
        let e = p.validate().expect_err("no diffusion").to_string();
        assert!(e.contains("params.boundary.left.temperature") && e.contains("thermal_diffusivity"), "{e}");
        p.thermal_diffusivity = 0.01;
        p.validate().expect("a held wall");
        assert_eq!(p.boundary.sides(0.0)[0], Side::Wall { no_slip: false, speed: 0.0, temperature: Some(1.0) });
        assert_eq!(p.boundary.sides(0.0)[0].carry().0, [0.0, 1.0, 0.0, 1.0]);
        p.boundary.left = Some(SideSpec { temperature: Some(1.0), ..SideSpec::new(SideType::Open) });
        let e = p.validate().expect_err("an open side").to_string();
        assert!(e.contains("params.boundary.left.temperature") && e.contains("open side"), "{e}");
        p.boundary.left = Some(SideSpec { density: 1.0, ..SideSpec::new(SideType::NoSlip) });
        assert!(p.validate().expect_err("density on a wall").to_string().contains("belong to an inflow"));
    }

    #[test]
    fn bad_values_name_their_key() {
        let mut p = SimParams { dt: f32::NAN, ..SimParams::default() };
        let e = p.validate().expect_err("NaN dt").to_string();
        assert!(e.contains("params.dt") && e.contains("NaN"), "{e}");
        p.dt = 0.01;
        p.pressure.omega = Some(1.5);
        assert!(p.validate().expect_err("omega").to_string().contains("omega"));
        p.pressure.omega = Some(0.9);
        p.pressure.solver = PressureSolver::Sor;
        p.pressure.omega = Some(1.5);
        p.validate().expect("SOR over-relaxes: 0 < omega < 2");
        p.pressure.omega = Some(2.0);
        assert!(p.validate().expect_err("omega").to_string().contains("SOR"));
        p.pressure.omega = None;
        p.validate().expect("the default omega");
        p.pressure.solver = PressureSolver::Jacobi;
        p.pressure.iterations = MAX_ITERATIONS;
        p.viscosity_iterations = MAX_ITERATIONS;
        p.validate().expect("the most iterations a step may hold");
        p.pressure.iterations = MAX_ITERATIONS + 1;
        let e = p.validate().expect_err("too many sweeps").to_string();
        assert!(e.contains("params.pressure.iterations") && e.contains("100001"), "{e}");
        p.pressure.iterations = 40;
        p.viscosity_iterations = MAX_ITERATIONS + 1;
        let e = p.validate().expect_err("too many diffusion sweeps").to_string();
        assert!(e.contains("params.viscosity_iterations") && e.contains("100001"), "{e}");
        p.viscosity_iterations = 20;
        p.thermal_diffusivity = -1.0;
        let e = p.validate().expect_err("negative diffusivity").to_string();
        assert!(e.contains("params.thermal_diffusivity") && e.contains("-1"), "{e}");
        p.thermal_diffusivity = 0.01;
        p.thermal_iterations = 0;
        assert!(p.validate().expect_err("no sweep").to_string().contains("params.thermal_iterations"));
        p.thermal_iterations = MAX_ITERATIONS + 1;
        assert!(p.validate().expect_err("too many").to_string().contains("100001"));
        p.thermal_iterations = 20;
        p.fields.temperature = false;
        let e = p.validate().expect_err("nothing to diffuse").to_string();
        assert!(e.contains("params.thermal_diffusivity") && e.contains("fields.temperature"), "{e}");
        p.fields.temperature = true;
        p.validate().expect("heat diffusion");
        p.thermal_diffusivity = 0.0;
        p.pressure.rank = 2;
        let e = p.validate().expect_err("a rank without the filter").to_string();
        assert!(e.contains("params.pressure.rank") && e.contains("poisson-filter"), "{e}");
        p.pressure.solver = PressureSolver::PoissonFilter;
        p.pressure.iterations = 16;
        p.validate().expect("the filter's rank");
        p.pressure.iterations = crate::grid::pressure::layout::MAX_SWEEPS;
        p.validate().expect("the most sweeps the filter unrolls");
        p.pressure.iterations = crate::grid::pressure::layout::MAX_SWEEPS + 1;
        let e = p.validate().expect_err("more sweeps than the filter unrolls").to_string();
        assert!(e.contains("params.pressure.iterations") && e.contains("at most"), "{e}");
        p.pressure.iterations = 16;
        p.pressure.solver = PressureSolver::Jacobi;
        p.pressure.rank = crate::grid::pressure::layout::MAX_RANK;
        p.boundary.x = Boundary::Open;
        p.validate().expect("open sides");
        p.boundary.top = Some(SideSpec { velocity: 1.0, ..SideSpec::new(SideType::Wall) });
        let e = p.validate().expect_err("a moving free-slip wall").to_string();
        assert!(e.contains("params.boundary.top.velocity") && e.contains("no-slip"), "{e}");
        p.boundary.top = Some(SideSpec { density: 1.0, ..SideSpec::new(SideType::Open) });
        let e = p.validate().expect_err("an open side carrying smoke").to_string();
        assert!(e.contains("params.boundary.top") && e.contains("inflow"), "{e}");
    }
}
