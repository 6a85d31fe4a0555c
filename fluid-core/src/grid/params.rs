//! Simulation parameters. Every field documents its default, and `impl Default` matches.
//!
//! Units: lengths in world units (a cell is `grid.h` wide), time in seconds, velocities in world
//! units per second. Pressure is scaled for unit density, so projection does `u -= dt ∇p`.

use serde::{Deserialize, Serialize};

use crate::frame::finite;
use crate::grid::{Boundary, FieldId, Inflow, Side};
use fluid_ir::{Error, Result};

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

/// Backtrace integrator of semi-Lagrangian advection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backtrace {
    /// One Euler step.
    Euler,
    /// Midpoint (second order).
    #[default]
    Rk2,
    /// Ralston's third order (Bridson's book; Taichi's `stable_fluid.py`).
    Rk3,
}

impl Backtrace {
    /// Order as used by the kernels (1, 2 or 3).
    pub fn order(self) -> u32 {
        match self {
            Backtrace::Euler => 1,
            Backtrace::Rk2 => 2,
            Backtrace::Rk3 => 3,
        }
    }
}

/// Advection scheme.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AdvectionScheme {
    /// Trace back along the velocity and sample there (Stam 1999).
    #[default]
    SemiLagrangian,
    /// MacCormack (Selle et al. 2008): the semi-Lagrangian value plus half the error of a
    /// forward-and-back round trip, clamped to the range of the backtrace's stencil. Two
    /// advections a step.
    Maccormack,
    /// BFECC (Kim et al. 2005): advect the field corrected by half the round trip's error,
    /// clamped to the range of the backtrace's stencil. Three advections a step.
    Bfecc,
}

impl AdvectionScheme {
    /// Whether it runs the round trip (MacCormack or BFECC).
    pub fn round_trip(self) -> bool {
        self != AdvectionScheme::SemiLagrangian
    }
}

/// Sampling filter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Interpolation {
    /// Bilinear.
    #[default]
    Bilinear,
    /// Monotone cubic (Fedkiw, Stam & Jensen 2001): a cubic through the 4 × 4 samples round the
    /// point, its slopes limited so that it never leaves the range of the two samples it lies
    /// between. Sharper than bilinear at the cost of 16 reads; semi-Lagrangian schemes only.
    MonotoneCubic,
}

/// Advection settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Advection {
    /// Scheme of the cell fields (density, temperature, dye, fuel), and of the velocity unless
    /// `velocity` says otherwise (default: `semi-lagrangian`).
    pub scheme: AdvectionScheme,
    /// Scheme of the velocity (default: `scheme`'s).
    pub velocity: Option<AdvectionScheme>,
    /// Backtrace integrator (default: `rk2`).
    pub backtrace: Backtrace,
    /// Sampling (default: `bilinear`).
    pub interpolation: Interpolation,
}

impl Advection {
    /// The velocity's scheme.
    pub fn velocity_scheme(&self) -> AdvectionScheme {
        self.velocity.unwrap_or(self.scheme)
    }
}

/// Pressure solvers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PressureSolver {
    /// Weighted Jacobi: `p ← p + ω (p_jacobi − p)`.
    #[default]
    Jacobi,
    /// The same sweeps, two per dispatch through GPU workgroup memory (temporal blocking):
    /// the same answer with half the memory traffic and half the barriers.
    JacobiMultisweep,
    /// Red-black Gauss–Seidel with successive over-relaxation: each iteration updates the red
    /// cells (`i + j` even) from their black neighbours, then the black cells from the new red
    /// values; `p ← p + ω (p_gs − p)` with ω in (0, 2).
    Sor,
    /// Geometric multigrid V-cycles ([`crate::grid::pressure::multigrid`]): two red-black Gauss–Seidel
    /// iterations before and after each coarse-grid correction, residual restriction by
    /// summing children, bilinear prolongation; `iterations` counts V-cycles.
    Multigrid,
    /// The MAC seed's per-cell relaxation of the velocity itself: each cell spreads its
    /// divergence over its open faces and each face takes the average of its two cells'
    /// corrections (scaled by ω, default 1). It is weighted Jacobi with ω/2 in disguise; the
    /// accumulated pressure is kept so the residual can be reported.
    Relaxation,
    /// Conjugate gradients preconditioned by one multigrid V-cycle (symmetric smoothing),
    /// with its dot products reduced on the device; `iterations` counts CG iterations.
    Mgpcg,
    /// The separable Poisson filter ([`crate::grid::pressure::poisson_filter`]): `iterations` (at most 32)
    /// Jacobi sweeps unrolled into one kernel, factored to `rank` pairs of 1D filters, applied
    /// in two passes (warm-started: four).
    PoissonFilter,
}

/// How the multigrid and MGPCG solvers hold the pressure they converge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Precision {
    /// Double-float: the pressure is kept as `pressure + pressure_lo` (two f32s, about 44
    /// significant bits); each cycle's residual is computed from it in difference form and the
    /// correction added to it exactly, so the relative residual keeps falling to about 1e-7.
    /// Costs one more pass over the grid per V-cycle (MGPCG: none).
    DoubleFloat,
    /// One f32: the cheapest cycle; the relative residual stalls where the f32 rounding of the
    /// pressure leaves it (measured on the solver benchmark's problem: 1e-5 at 256², 3e-5 at
    /// 1024², above 1e-4 at 4096²). Multigrid only.
    Single,
}

/// Projection settings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Pressure {
    /// Solver: `jacobi`, `jacobi-multisweep`, `sor`, `multigrid`, `mgpcg`, `poisson-filter` or
    /// `relaxation` (default: `jacobi`).
    pub solver: PressureSolver,
    /// Sweeps of `jacobi`, iterations of `sor` (one red and one black pass each), V-cycles of
    /// `multigrid` (default: `40`; at most [`MAX_ITERATIONS`]).
    pub iterations: u32,
    /// Relaxation weight ω. Weighted Jacobi needs ω in (0, 1] (default `0.9`; plain Jacobi,
    /// ω = 1, never damps the checkerboard mode on a periodic or cell-centred wall grid: its
    /// amplification factor is `|1 − 2ω|`). SOR needs ω in (0, 2); its default is the
    /// asymptotic optimum for the Poisson problem, `2 / (1 + sin(π / N))` with N the longer side
    /// of the grid, capped at `1 + 0.01^(1/k)` for k iterations: SOR damps the highest
    /// frequencies only by `|1 − ω|` per iteration, and a near-2 ω with a small budget (say 30
    /// iterations at 256²) leaves them undamped and the flow blows up over the steps.
    pub omega: Option<f32>,
    /// Start from the previous step's pressure instead of zero (default: `true`).
    pub warm_start: bool,
    /// Stop a step's solve once its relative residual ‖b − A p‖ / ‖b‖ is at most this, with
    /// `iterations` as the cap (default: none, always `iterations`). The residual is checked
    /// every [`PressureSolver::check_every`] iterations; each check reads a reduction back, so
    /// the CPU waits for the GPU there.
    pub tolerance: Option<f32>,
    /// `poisson-filter`: pairs of 1D filters kept from the SVD, 1 to 4 (default: `4`).
    pub rank: u32,
    /// `multigrid`: `double-float` or `single` (default: `double-float`). MGPCG is always
    /// double-float; the other solvers always single (setting it to anything else is an error).
    pub precision: Option<Precision>,
}

impl Default for Pressure {
    fn default() -> Self {
        Pressure {
            solver: PressureSolver::Jacobi,
            iterations: 40,
            omega: None,
            warm_start: true,
            tolerance: None,
            rank: crate::grid::pressure::layout::MAX_RANK,
            precision: None,
        }
    }
}

impl PressureSolver {
    /// Iterations between residual checks when a tolerance is set: every V-cycle, every 5
    /// SOR iterations, every 10 Jacobi sweeps.
    pub fn check_every(self) -> u32 {
        match self {
            PressureSolver::Multigrid | PressureSolver::Mgpcg | PressureSolver::PoissonFilter => 1,
            PressureSolver::Sor => 5,
            PressureSolver::Jacobi | PressureSolver::JacobiMultisweep | PressureSolver::Relaxation => 10,
        }
    }
}

impl Pressure {
    /// The precision the solver keeps the pressure in: the one given, or the solver's
    /// (double-float for `multigrid` and `mgpcg`, single for the rest).
    pub fn precision(&self) -> Precision {
        match self.solver {
            PressureSolver::Multigrid => self.precision.unwrap_or(Precision::DoubleFloat),
            PressureSolver::Mgpcg => Precision::DoubleFloat,
            _ => Precision::Single,
        }
    }

    /// The ω the solver uses on a grid with the longer side `n` cells: the one given, or the
    /// solver's default.
    pub fn omega_for(&self, n: u32) -> f32 {
        self.omega.unwrap_or(match self.solver {
            PressureSolver::Jacobi | PressureSolver::JacobiMultisweep | PressureSolver::PoissonFilter => 0.9,
            PressureSolver::Multigrid | PressureSolver::Relaxation | PressureSolver::Mgpcg => 1.0,
            PressureSolver::Sor => {
                let optimum = 2.0 / (1.0 + (std::f64::consts::PI / f64::from(n.max(2))).sin());
                let smooth = 1.0 + 0.01f64.powf(1.0 / f64::from(self.iterations.max(1)));
                optimum.min(smooth) as f32
            }
        })
    }
}

/// Boundary of each axis, and of each side where it differs from its axis'.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Boundaries {
    /// Left and right sides (default: `wall`).
    pub x: Boundary,
    /// Bottom and top sides (default: `wall`).
    pub y: Boundary,
    /// The left side, where not its axis' (default: none).
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "side_entry")]
    pub left: Option<SideSpec>,
    /// The right side (default: none).
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "side_entry")]
    pub right: Option<SideSpec>,
    /// The bottom side (default: none).
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "side_entry")]
    pub bottom: Option<SideSpec>,
    /// The top side (default: none).
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "side_entry")]
    pub top: Option<SideSpec>,
}

impl Boundaries {
    /// The four sides (left, right, bottom, top) for a scene whose ambient temperature is
    /// `ambient` (what an inflow carries unless told).
    pub fn sides(&self, ambient: f32) -> [Side; 4] {
        let axis = [self.x, self.x, self.y, self.y];
        let given = [self.left, self.right, self.bottom, self.top];
        std::array::from_fn(|k| given[k].map_or(Side::of(axis[k]), |s| s.side(ambient)))
    }

    fn validate(&self) -> Result<()> {
        let given = [self.left, self.right, self.bottom, self.top];
        for (name, spec) in crate::grid::SIDE_NAMES.iter().zip(given) {
            if let Some(spec) = spec {
                spec.validate(&format!("params.boundary.{name}"))?;
            }
        }
        Ok(())
    }
}

/// A side given by its type alone (`left = "open"`) or as a table (`[params.boundary.left]`).
fn side_entry<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<SideSpec>, D::Error> {
    use serde::de::{self, IntoDeserializer, MapAccess, Visitor};
    struct Entry;
    impl<'de> Visitor<'de> for Entry {
        type Value = SideSpec;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a side type (\"wall\", \"no-slip\", \"open\" or \"inflow\") or a table with `type`")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<SideSpec, E> {
            SideType::deserialize(v.into_deserializer()).map(SideSpec::new)
        }
        fn visit_map<A: MapAccess<'de>>(self, m: A) -> std::result::Result<SideSpec, A::Error> {
            SideSpec::deserialize(de::value::MapAccessDeserializer::new(m))
        }
    }
    d.deserialize_any(Entry).map(Some)
}

/// What one side does: `"wall"`, `"no-slip"`, `"open"` or `"inflow"`, or a table with `type`
/// and the side's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SideType {
    /// A free-slip wall.
    Wall,
    /// A no-slip wall, moving tangentially at `velocity` (a lid).
    NoSlip,
    /// Outflow.
    Open,
    /// Inflow at `velocity`.
    Inflow,
}

/// How a solid surface holds the fluid beside it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Slip {
    /// The fluid moves with the surface (the viscous step sees the solid's velocity there).
    #[default]
    NoSlip,
    /// The fluid slides along it (only the normal velocity is the solid's).
    Free,
}

/// The inflow's profile across its side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// The same speed all along.
    #[default]
    Uniform,
    /// Zero at the side's ends, `velocity` at its middle.
    Parabolic,
}

/// One side in a scene (see [`Side`] for what each type does).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideSpec {
    /// What the side is.
    #[serde(rename = "type")]
    pub kind: SideType,
    /// A no-slip wall's tangential speed (along +x on the bottom and top, +y on the left and
    /// right), an inflow's inward speed, world units/s (default: `0`).
    #[serde(default)]
    pub velocity: f32,
    /// An inflow's profile (default: `uniform`).
    #[serde(default)]
    pub profile: Profile,
    /// Smoke density an inflow carries in (default: `0`).
    #[serde(default)]
    pub density: f32,
    /// Temperature an inflow carries in (default: the ambient temperature), or a wall holds
    /// through heat diffusion (default: none, the wall insulates; needs
    /// `params.thermal_diffusivity` > 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Dye (RGBA) an inflow carries in (default: none).
    #[serde(default)]
    pub dye: [f32; 4],
    /// 0: an inflow carries its smoke and dye across the whole side; n: in n bands with gaps
    /// as wide between them, streaklines (default: `0`; at most 1024).
    #[serde(default)]
    pub stripes: u32,
}

impl SideSpec {
    /// A side of this type with every value at its default.
    pub fn new(kind: SideType) -> SideSpec {
        SideSpec {
            kind,
            velocity: 0.0,
            profile: Profile::Uniform,
            density: 0.0,
            temperature: None,
            dye: [0.0; 4],
            stripes: 0,
        }
    }

    /// The side the grid carries.
    pub fn side(&self, ambient: f32) -> Side {
        match self.kind {
            SideType::Wall => Side::Wall { no_slip: false, speed: 0.0, temperature: self.temperature },
            SideType::NoSlip => Side::Wall { no_slip: true, speed: self.velocity, temperature: self.temperature },
            SideType::Open => Side::Open,
            SideType::Inflow => Side::Inflow(Inflow {
                speed: self.velocity,
                parabolic: self.profile == Profile::Parabolic,
                density: self.density,
                temperature: self.temperature.unwrap_or(ambient),
                dye: self.dye,
                stripes: self.stripes,
            }),
        }
    }

    fn validate(&self, key: &str) -> Result<()> {
        finite(&format!("{key}.velocity"), self.velocity)?;
        finite(&format!("{key}.density"), self.density)?;
        if let Some(t) = self.temperature {
            finite(&format!("{key}.temperature"), t)?;
        }
        for (c, x) in self.dye.iter().enumerate() {
            finite(&format!("{key}.dye[{c}]"), *x)?;
        }
        if self.stripes > 1024 {
            return Err(Error::invalid(format!("{key}.stripes"), self.stripes, "at most 1024 bands"));
        }
        let inflow = self.kind == SideType::Inflow;
        let carries =
            self.density != 0.0 || self.dye != [0.0; 4] || self.stripes != 0 || self.profile != Profile::Uniform;
        if !inflow && carries {
            return Err(Error::invalid(
                key,
                format!("{:?}", self.kind).to_lowercase(),
                "`profile`, `density`, `dye` and `stripes` belong to an inflow (`type = \"inflow\"`)",
            ));
        }
        if self.kind == SideType::Open
            && let Some(t) = self.temperature
        {
            let why = "an open side holds no temperature: what leaves takes its own (a wall or an inflow may hold one)";
            return Err(Error::invalid(format!("{key}.temperature"), t, why));
        }
        if matches!(self.kind, SideType::Wall | SideType::Open) && self.velocity != 0.0 {
            return Err(Error::invalid(
                format!("{key}.velocity"),
                self.velocity,
                "only a no-slip wall (a moving lid) or an inflow has a velocity; a free-slip wall cannot drag the fluid",
            ));
        }
        Ok(())
    }
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
    pub fn not_carried(&self, field: FieldId) -> Option<String> {
        (!self.carries(field)).then(|| format!("the step does not carry {0} (params.fields.{0} = false)", field.name()))
    }
}

/// The most iterations a step's pressure or viscosity solve may ask for.
///
/// A step is data: its [`fluid_ir::Schedule`] lists every dispatch, and the GPU backends record
/// each into the step's command buffer, where the driver keeps memory per dispatch (measured
/// for Jacobi sweeps: about 2 KB on lavapipe's Vulkan, 3 KB on wgpu over lavapipe, 1.2 KB on
/// either API on an H100's driver). So 10⁸ sweeps would need hundreds of GB before the first
/// one ran; 10⁵ sweeps need 100–300 MB. That is more than any real-time step spends: a solve that
/// must converge on a large grid wants `multigrid` (a few V-cycles) rather than more sweeps.
pub const MAX_ITERATIONS: u32 = 100_000;

fn iterations(key: &str, n: u32) -> Result<()> {
    if n > MAX_ITERATIONS {
        return Err(Error::invalid(
            key,
            n,
            format!(
                "at most {MAX_ITERATIONS} per step: every iteration is recorded as dispatches the step holds in \
                 memory; for a converged solve use solver = \"multigrid\" (a few V-cycles) or a tolerance"
            ),
        ));
    }
    Ok(())
}

fn non_negative(key: &str, x: f32) -> Result<()> {
    finite(key, x)?;
    if x < 0.0 {
        return Err(Error::invalid(key, x, "must be >= 0"));
    }
    Ok(())
}

impl SimParams {
    /// Check every value; the error names the first bad key and its value.
    pub fn validate(&self) -> Result<()> {
        finite("params.dt", self.dt)?;
        if self.dt <= 0.0 {
            return Err(Error::invalid("params.dt", self.dt, "the time step must be > 0"));
        }
        non_negative("params.dissipation.velocity", self.dissipation.velocity)?;
        non_negative("params.dissipation.density", self.dissipation.density)?;
        non_negative("params.dissipation.temperature", self.dissipation.temperature)?;
        non_negative("params.dissipation.dye", self.dissipation.dye)?;
        non_negative("params.dissipation.fuel", self.dissipation.fuel)?;
        self.validate_combustion()?;
        self.validate_turbulence()?;
        non_negative("params.surface_tension", self.surface_tension)?;
        if self.surface_tension > 0.0 && !self.fields.density {
            let why = "surface tension pulls on the density: the scene sets params.fields.density = false";
            return Err(Error::invalid("params.surface_tension", self.surface_tension, why));
        }
        let a = &self.advection;
        if a.interpolation == Interpolation::MonotoneCubic
            && (a.scheme.round_trip() || a.velocity_scheme().round_trip())
        {
            let why = "monotone cubic sampling is a semi-Lagrangian scheme: MacCormack and BFECC sample bilinearly; \
                       choose one (params.advection.scheme, params.advection.velocity)";
            return Err(Error::invalid("params.advection.interpolation", "monotone-cubic", why));
        }
        non_negative("params.vorticity", self.vorticity)?;
        finite("params.buoyancy.density_weight", self.buoyancy.density_weight)?;
        finite("params.buoyancy.temperature_lift", self.buoyancy.temperature_lift)?;
        finite("params.buoyancy.ambient_temperature", self.buoyancy.ambient_temperature)?;
        finite("params.gravity[0]", self.gravity[0])?;
        finite("params.gravity[1]", self.gravity[1])?;
        if let Some(s) = self.max_speed {
            finite("params.max_speed", s)?;
            if s <= 0.0 {
                return Err(Error::invalid("params.max_speed", s, "must be > 0 (leave it out for no clamp)"));
            }
        }
        if let Some(c) = self.cfl {
            finite("params.cfl", c)?;
            if c <= 0.0 {
                return Err(Error::invalid("params.cfl", c, "must be > 0 (leave it out for whole steps)"));
            }
        }
        if !(1..=64).contains(&self.max_substeps) {
            return Err(Error::invalid("params.max_substeps", self.max_substeps, "must be 1 to 64"));
        }
        non_negative("params.viscosity", self.viscosity)?;
        if self.viscosity > 0.0 && self.viscosity_iterations == 0 {
            return Err(Error::invalid(
                "params.viscosity_iterations",
                0,
                "a viscous fluid needs at least one diffusion sweep",
            ));
        }
        iterations("params.viscosity_iterations", self.viscosity_iterations)?;
        non_negative("params.thermal_diffusivity", self.thermal_diffusivity)?;
        if self.thermal_diffusivity > 0.0 {
            if self.thermal_iterations == 0 {
                let why = "heat diffusion needs at least one sweep";
                return Err(Error::invalid("params.thermal_iterations", 0, why));
            }
            if !self.fields.temperature {
                let why = "there is no temperature to diffuse: the scene sets params.fields.temperature = false";
                return Err(Error::invalid("params.thermal_diffusivity", self.thermal_diffusivity, why));
            }
        }
        iterations("params.thermal_iterations", self.thermal_iterations)?;
        if self.pressure.iterations == 0 {
            return Err(Error::invalid("params.pressure.iterations", 0, "the projection needs at least one sweep"));
        }
        iterations("params.pressure.iterations", self.pressure.iterations)?;
        if let Some(omega) = self.pressure.omega {
            finite("params.pressure.omega", omega)?;
            match self.pressure.solver {
                PressureSolver::Jacobi | PressureSolver::JacobiMultisweep | PressureSolver::PoissonFilter
                    if !(omega > 0.0 && omega <= 1.0) =>
                {
                    return Err(Error::invalid(
                        "params.pressure.omega",
                        omega,
                        "weighted Jacobi converges for 0 < omega <= 1 (0.8-0.9 damps the checkerboard mode)",
                    ));
                }
                PressureSolver::Sor
                | PressureSolver::Multigrid
                | PressureSolver::Relaxation
                | PressureSolver::Mgpcg
                    if !(omega > 0.0 && omega < 2.0) =>
                {
                    return Err(Error::invalid(
                        "params.pressure.omega",
                        omega,
                        "SOR converges for 0 < omega < 2 (leave it out for the optimum)",
                    ));
                }
                _ => {}
            }
        }
        if self.pressure.solver == PressureSolver::PoissonFilter {
            let max = crate::grid::pressure::layout::MAX_SWEEPS;
            if self.pressure.iterations > max {
                return Err(Error::invalid(
                    "params.pressure.iterations",
                    self.pressure.iterations,
                    format!("the Poisson filter unrolls at most {max} sweeps"),
                ));
            }
            if !(1..=crate::grid::pressure::layout::MAX_RANK).contains(&self.pressure.rank) {
                return Err(Error::invalid(
                    "params.pressure.rank",
                    self.pressure.rank,
                    format!("between 1 and {}", crate::grid::pressure::layout::MAX_RANK),
                ));
            }
            if self.pressure.tolerance.is_some() {
                return Err(Error::invalid(
                    "params.pressure.tolerance",
                    "set",
                    "the Poisson filter is a fixed number of sweeps; it has no iterations to stop early",
                ));
            }
        } else if self.pressure.rank != crate::grid::pressure::layout::MAX_RANK {
            return Err(Error::invalid(
                "params.pressure.rank",
                self.pressure.rank,
                "only the poisson-filter solver has a rank; leave it out",
            ));
        }
        match (self.pressure.precision, self.pressure.solver) {
            (None, _)
            | (Some(_), PressureSolver::Multigrid)
            | (Some(Precision::DoubleFloat), PressureSolver::Mgpcg) => {}
            (Some(Precision::Single), PressureSolver::Mgpcg) => {
                return Err(Error::invalid(
                    "params.pressure.precision",
                    "single",
                    "MGPCG keeps its iterate in double-float (in f32 it stalls near 1e-4); leave it out",
                ));
            }
            (Some(p), _) => {
                return Err(Error::invalid(
                    "params.pressure.precision",
                    if p == Precision::Single { "single" } else { "double-float" },
                    "only `multigrid` has a choice (the other solvers work in f32, MGPCG in double-float); leave it out",
                ));
            }
        }
        if let Some(t) = self.pressure.tolerance {
            finite("params.pressure.tolerance", t)?;
            if !(t > 0.0 && t < 1.0) {
                return Err(Error::invalid(
                    "params.pressure.tolerance",
                    t,
                    "a relative residual between 0 and 1 (exclusive), e.g. 1e-4",
                ));
            }
        }
        self.boundary.validate()?;
        let given = [self.boundary.left, self.boundary.right, self.boundary.bottom, self.boundary.top];
        for (name, spec) in crate::grid::SIDE_NAMES.iter().zip(given) {
            if let Some(spec) = spec
                && let (SideType::Wall | SideType::NoSlip, Some(t)) = (spec.kind, spec.temperature)
                && (self.thermal_diffusivity <= 0.0 || !self.fields.temperature)
            {
                let why = "a wall's temperature enters the fluid by heat diffusion: set params.thermal_diffusivity > 0 \
                           (with the temperature field on)";
                return Err(Error::invalid(format!("params.boundary.{name}.temperature"), t, why));
            }
        }
        Ok(())
    }

    fn validate_turbulence(&self) -> Result<()> {
        let t = &self.turbulence;
        finite("params.turbulence.amplitude", t.amplitude)?;
        finite("params.turbulence.scale", t.scale)?;
        if t.scale <= 0.0 {
            return Err(Error::invalid("params.turbulence.scale", t.scale, "the eddies' size must be > 0"));
        }
        non_negative("params.turbulence.speed", t.speed)?;
        if !(1..=4).contains(&t.octaves) {
            return Err(Error::invalid("params.turbulence.octaves", t.octaves, "must be 1 to 4"));
        }
        finite("params.turbulence.mask_full", t.mask_full)?;
        if t.mask_full <= 0.0 {
            return Err(Error::invalid("params.turbulence.mask_full", t.mask_full, "must be > 0"));
        }
        let needs = match t.mask {
            TurbulenceMask::Density if !self.fields.density => Some("density"),
            TurbulenceMask::Temperature if !self.fields.temperature => Some("temperature"),
            _ => None,
        };
        if let (true, Some(field)) = (t.on(), needs) {
            let why = format!("the mask's field is off (params.fields.{field} = false)");
            return Err(Error::invalid("params.turbulence.mask", field, why));
        }
        Ok(())
    }

    fn validate_combustion(&self) -> Result<()> {
        let c = &self.combustion;
        non_negative("params.combustion.rate", c.rate)?;
        finite("params.combustion.ignition", c.ignition)?;
        non_negative("params.combustion.heat", c.heat)?;
        non_negative("params.combustion.soot", c.soot)?;
        non_negative("params.combustion.expansion", c.expansion)?;
        if !c.on() {
            return Ok(());
        }
        if !self.fields.fuel {
            let why = "nothing burns without fuel: set params.fields.fuel = true (and give emitters `fuel`)";
            return Err(Error::invalid("params.combustion.rate", c.rate, why));
        }
        if !self.fields.temperature {
            let why = "fuel ignites by temperature: the scene sets params.fields.temperature = false";
            return Err(Error::invalid("params.combustion.rate", c.rate, why));
        }
        if c.soot > 0.0 && !self.fields.density {
            let why = "soot is density: the scene sets params.fields.density = false";
            return Err(Error::invalid("params.combustion.soot", c.soot, why));
        }
        if c.expansion > 0.0 {
            if self.pressure.solver == PressureSolver::Relaxation {
                let why = "the relaxation solver projects the velocity in place and takes no divergence source; \
                           choose another params.pressure.solver";
                return Err(Error::invalid("params.combustion.expansion", c.expansion, why));
            }
            let sides = self.boundary.sides(self.buoyancy.ambient_temperature);
            if !sides.iter().any(|s| matches!(s, Side::Open)) {
                let why = "expanding gas needs a way out: give the box an open side (params.boundary)";
                return Err(Error::invalid("params.combustion.expansion", c.expansion, why));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
