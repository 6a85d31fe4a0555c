//! The step as data: kernels, their bindings, and the ordered invocations of one step.
//!
//! A [`Schedule`] is built once from a grid and [`SimParams`]; a backend executes it without
//! deciding anything about the physics. Values that change every step (dt, splats) are not in
//! the schedule but in [`crate::StepInputs`], so GPU backends can record a schedule once and
//! replay it.

use crate::grid::{FieldId, Grid};
use crate::params::{PressureSolver, SimParams};
use crate::uniforms::{
    ADVECT_DENSITY, ADVECT_DYE, ADVECT_TEMPERATURE, AdvectParams, CgParams, DiffuseParams, FilterParams, ForceParams,
    GridUniform, JacobiParams, MULTISWEEP_MAX, MULTISWEEP_TILE, MgParams, TapsParams,
};

/// How a binding is used by a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read only.
    Read,
    /// Written only (every element the kernel covers).
    Write,
    /// Read and written in place (each invocation touches only its own element).
    ReadWrite,
}

/// The threads a kernel is launched over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// One invocation per cell: `nx × ny`.
    Cells,
    /// One invocation per face pair: `(nx + 1) × (ny + 1)`; invocation `(i, j)` handles
    /// `u[i, j]` when `j < ny` and `v[i, j]` when `i < nx` (and cell `(i, j)` when both hold).
    Faces,
}

/// A binding slot of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding {
    /// The slot's name in the kernel source.
    pub name: &'static str,
    /// How the kernel uses it.
    pub access: Access,
}

macro_rules! b {
    ($name:literal, $access:ident) => {
        Binding { name: $name, access: $access }
    };
}

use Access::{Read as R, ReadWrite as RW, Write as W};

/// Every kernel of the engine. The name is the same on every backend: `fluid-cpu/src/kernels/<name>.rs`,
/// `fluid-shaders/shaders/grid/<name>.wgsl`, and the label `fluid.<name>` in timings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kernel {
    /// Semi-Lagrangian advection of `u` and `v` by themselves.
    AdvectVelocity,
    /// Semi-Lagrangian advection of density, temperature and dye; applies their dissipation.
    AdvectCells,
    /// Adds the step's splats to velocity, density, temperature and dye.
    Splat,
    /// Vorticity ω = ∂v/∂x − ∂u/∂y at cell centres.
    Curl,
    /// Buoyancy, gravity and vorticity confinement on the faces; the max-speed clamp.
    ApplyForces,
    /// One Jacobi sweep of implicit viscosity `(I − ν dt ∇²) u = u₀`.
    DiffuseVelocity,
    /// Velocity divergence at cell centres.
    Divergence,
    /// One weighted-Jacobi sweep of the pressure Poisson equation.
    Jacobi,
    /// Two weighted-Jacobi sweeps fused in one dispatch (temporal blocking on GPUs); the same
    /// arithmetic as two `jacobi` dispatches.
    JacobiMultisweep,
    /// One colour pass of red-black SOR: cells of the pass's colour are relaxed from their
    /// neighbours, the others copied (ping-pong buffers, so every pass is race-free and
    /// deterministic on any backend).
    Sor,
    /// The MAC seed's relaxation: one iteration on the velocity (each face takes the average
    /// of its two cells' corrections), accumulating the equivalent pressure.
    Relax,
    /// Multigrid: level 0 of the packed hierarchy from the simulation fields: `b = −h² ∇·u / dt`
    /// and `p` = the pressure (or zero), or, in double-float, `b` = the residual of the pressure
    /// `pressure + pressure_lo` (see [`crate::multigrid::LOAD_RESIDUAL`]).
    MgLoad,
    /// Multigrid: one red-black Gauss–Seidel colour pass on one level (ping-pong, as `sor`).
    MgSmooth,
    /// Multigrid: two red-black iterations on one level in one dispatch, from the iterate at
    /// `p` into `tmp` (see [`crate::multigrid::Step::Smooth2`]).
    MgSmooth2,
    /// Multigrid: the residual of a level, summed over each coarse cell's children into the
    /// coarser level's `b`; the coarser `p` set to zero.
    MgRestrict,
    /// Multigrid: add the coarser level's correction, interpolated bilinearly between
    /// cell centres, to a level's `p`.
    MgProlong,
    /// Multigrid: the rest of a V-cycle from a level that [`crate::multigrid::fits_coarse`]
    /// down and back up, every step of [`crate::multigrid::v_cycle`] in order, in one
    /// workgroup holding the levels in workgroup memory.
    MgCoarse,
    /// Multigrid: level 0's `p` into the pressure: copied, copied with its low part (MGPCG's
    /// double-float `x`), or added to the double-float pressure as a correction (see
    /// [`crate::multigrid::STORE_COPY`]).
    MgStore,
    /// Poisson filter: write up to eight filter taps into the packed buffer (setup, once).
    PoissonTaps,
    /// Poisson filter: the row pass, `rank` 1D convolutions along x of the pressure or of `b`.
    PoissonRows,
    /// Poisson filter: the column pass, the `rank` convolutions along y summed.
    PoissonCols,
    /// MGPCG: `x` = the pressure (or zero) in double-float, `r = b − A x`.
    CgInit,
    /// MGPCG: a dot product in two passes (partial sums, then their sum into a scalar slot).
    CgDot,
    /// MGPCG: `d = z + β d`, β = (r·z) / (r·z of the previous iteration).
    CgDirection,
    /// MGPCG: `q = A d`.
    CgApply,
    /// MGPCG: α = (r·z) / (d·q); `x += α d` (in double-float), `r −= α q`.
    CgUpdate,
    /// `u -= dt ∇p` on every face.
    SubtractGradient,
    /// Per-cell residual `b − A p` of the pressure equation.
    Residual,
}

impl Kernel {
    /// Every kernel.
    pub const ALL: &'static [Kernel] = &[
        Kernel::AdvectVelocity,
        Kernel::AdvectCells,
        Kernel::Splat,
        Kernel::Curl,
        Kernel::ApplyForces,
        Kernel::DiffuseVelocity,
        Kernel::Divergence,
        Kernel::Jacobi,
        Kernel::JacobiMultisweep,
        Kernel::Sor,
        Kernel::Relax,
        Kernel::MgLoad,
        Kernel::MgSmooth,
        Kernel::MgSmooth2,
        Kernel::MgRestrict,
        Kernel::MgProlong,
        Kernel::MgCoarse,
        Kernel::MgStore,
        Kernel::PoissonTaps,
        Kernel::PoissonRows,
        Kernel::PoissonCols,
        Kernel::CgInit,
        Kernel::CgDot,
        Kernel::CgDirection,
        Kernel::CgApply,
        Kernel::CgUpdate,
        Kernel::SubtractGradient,
        Kernel::Residual,
    ];

    /// The shared name.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::AdvectVelocity => "advect_velocity",
            Kernel::AdvectCells => "advect_cells",
            Kernel::Splat => "splat",
            Kernel::Curl => "curl",
            Kernel::ApplyForces => "apply_forces",
            Kernel::DiffuseVelocity => "diffuse_velocity",
            Kernel::Divergence => "divergence",
            Kernel::Jacobi => "jacobi",
            Kernel::JacobiMultisweep => "jacobi_multisweep",
            Kernel::Sor => "sor",
            Kernel::Relax => "relax",
            Kernel::MgLoad => "mg_load",
            Kernel::MgSmooth => "mg_smooth",
            Kernel::MgSmooth2 => "mg_smooth2",
            Kernel::MgRestrict => "mg_restrict",
            Kernel::MgProlong => "mg_prolong",
            Kernel::MgCoarse => "mg_coarse",
            Kernel::MgStore => "mg_store",
            Kernel::PoissonTaps => "poisson_taps",
            Kernel::PoissonRows => "poisson_rows",
            Kernel::PoissonCols => "poisson_cols",
            Kernel::CgInit => "cg_init",
            Kernel::CgDot => "cg_dot",
            Kernel::CgDirection => "cg_direction",
            Kernel::CgApply => "cg_apply",
            Kernel::CgUpdate => "cg_update",
            Kernel::SubtractGradient => "subtract_gradient",
            Kernel::Residual => "residual",
        }
    }

    /// Label used for buffers, pipelines and timing scopes.
    pub fn label(self) -> String {
        format!("fluid.{}", self.name())
    }

    /// The launch domain: faces for the kernels that update velocity (and, in `relax`, the
    /// cells alongside), cells for the rest.
    pub fn domain(self) -> Domain {
        if matches!(
            self,
            Kernel::AdvectVelocity
                | Kernel::Splat
                | Kernel::Relax
                | Kernel::ApplyForces
                | Kernel::DiffuseVelocity
                | Kernel::SubtractGradient
        ) {
            Domain::Faces
        } else {
            Domain::Cells
        }
    }

    /// Whether the kernel reads a parameter block ([`Params`] other than `None`): all but the
    /// few that need only the grid and step uniforms.
    pub fn has_params(self) -> bool {
        !matches!(self, Kernel::Splat | Kernel::Curl | Kernel::Divergence | Kernel::SubtractGradient | Kernel::Residual)
    }

    /// The invocations (`x`, `y`) one workgroup covers when the kernel's shader fixes them
    /// (`cg_dot`: 256 × 1, a 1D reduction; `mg_coarse`: one workgroup of 256 × 1; `mg_smooth2`:
    /// a [`crate::multigrid::SMOOTH2_TILE`]² tile of cells, worked on by 256 threads;
    /// `jacobi_multisweep`: a [`MULTISWEEP_TILE`]² tile of cells, worked on by 256 threads);
    /// `None`: the backend's 2D workgroup shape.
    pub fn fixed_workgroup(self) -> Option<(u32, u32)> {
        match self {
            Kernel::CgDot => Some((256, 1)),
            Kernel::MgCoarse => Some((crate::multigrid::COARSE_THREADS, 1)),
            Kernel::MgSmooth2 => Some((crate::multigrid::SMOOTH2_TILE, crate::multigrid::SMOOTH2_TILE)),
            Kernel::JacobiMultisweep => Some((MULTISWEEP_TILE, MULTISWEEP_TILE)),
            _ => None,
        }
    }

    /// The GPU shader entry point of this kernel.
    pub fn entry(self) -> ShaderEntry {
        ShaderEntry {
            name: self.name(),
            file: self.name(),
            storage: self.bindings(),
            params: self.has_params(),
            splats: self == Kernel::Splat,
        }
    }

    /// The binding slots, in order. A [`Dispatch`] names one field per slot.
    pub fn bindings(self) -> &'static [Binding] {
        match self {
            Kernel::AdvectVelocity => &[b!("u", R), b!("v", R), b!("u_out", W), b!("v_out", W)],
            Kernel::AdvectCells => &[
                b!("u", R),
                b!("v", R),
                b!("density", R),
                b!("temperature", R),
                b!("dye", R),
                b!("density_out", W),
                b!("temperature_out", W),
                b!("dye_out", W),
            ],
            Kernel::Splat => &[b!("u", RW), b!("v", RW), b!("density", RW), b!("temperature", RW), b!("dye", RW)],
            Kernel::Curl => &[b!("u", R), b!("v", R), b!("curl", W)],
            Kernel::ApplyForces => &[b!("u", RW), b!("v", RW), b!("density", R), b!("temperature", R), b!("curl", R)],
            Kernel::DiffuseVelocity => {
                &[b!("u0", R), b!("v0", R), b!("u", R), b!("v", R), b!("u_out", W), b!("v_out", W)]
            }
            Kernel::Divergence => &[b!("u", R), b!("v", R), b!("divergence", W)],
            Kernel::Jacobi | Kernel::JacobiMultisweep | Kernel::Sor => {
                &[b!("pressure", R), b!("divergence", R), b!("pressure_out", W)]
            }
            Kernel::Relax => &[b!("u", R), b!("v", R), b!("pressure", RW), b!("u_out", W), b!("v_out", W)],
            Kernel::MgLoad => &[b!("pressure", RW), b!("pressure_lo", RW), b!("divergence", R), b!("mg", RW)],
            Kernel::CgInit => &[b!("pressure", R), b!("pressure_lo", R), b!("divergence", R), b!("mg", RW)],
            Kernel::MgSmooth2 => &[b!("mg", RW), b!("pressure", RW), b!("pressure_lo", RW), b!("divergence", R)],
            Kernel::MgSmooth
            | Kernel::MgRestrict
            | Kernel::MgProlong
            | Kernel::MgCoarse
            | Kernel::CgDot
            | Kernel::CgDirection
            | Kernel::CgApply
            | Kernel::CgUpdate => &[b!("mg", RW)],
            Kernel::PoissonRows => &[b!("pressure", R), b!("divergence", R), b!("mg", RW)],
            Kernel::PoissonTaps => &[b!("mg", RW)],
            Kernel::PoissonCols => &[b!("mg", RW), b!("pressure", W)],
            Kernel::MgStore => &[b!("mg", R), b!("pressure", RW), b!("pressure_lo", RW)],
            Kernel::SubtractGradient => &[b!("u", RW), b!("v", RW), b!("pressure", R), b!("pressure_lo", R)],
            Kernel::Residual => &[b!("pressure", R), b!("pressure_lo", R), b!("divergence", R), b!("residual", W)],
        }
    }
}

/// The interface of one GPU shader entry point, the same for both GPU backends: group 0 holds
/// the grid uniform (binding 0), the step uniform (1), the parameter block (2, at a dynamic
/// offset) when [`ShaderEntry::params`] and the splat list (3) when [`ShaderEntry::splats`];
/// group 1 holds one storage buffer per slot of [`ShaderEntry::storage`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShaderEntry {
    /// Entry point name (= file stem of `fluid-shaders/gen/<name>.spv`).
    pub name: &'static str,
    /// The shader file it lives in (`fluid-shaders/shaders/<model>/<file>.wgsl`).
    pub file: &'static str,
    /// The group-1 storage buffers, in binding order.
    pub storage: &'static [Binding],
    /// Whether it reads a parameter block.
    pub params: bool,
    /// Whether it reads the splat list.
    pub splats: bool,
}

/// Storage slots of the two reduction entries: data, partials, results.
const REDUCE_STORAGE: &[Binding] = &[b!("data", R), b!("partials", RW), b!("results", RW)];

impl ShaderEntry {
    /// The reduction's first pass (one partial per workgroup).
    pub const REDUCE_PARTIAL: ShaderEntry =
        ShaderEntry { name: "reduce_partial", file: "reduce", storage: REDUCE_STORAGE, params: true, splats: false };
    /// The reduction's second pass (partials to a result slot).
    pub const REDUCE_FINAL: ShaderEntry =
        ShaderEntry { name: "reduce_final", file: "reduce", storage: REDUCE_STORAGE, params: true, splats: false };

    /// Every entry point a schedule can need: one per kernel, then the two reduction passes.
    pub fn all() -> Vec<ShaderEntry> {
        let mut v: Vec<ShaderEntry> = Kernel::ALL.iter().map(|k| k.entry()).collect();
        v.extend([ShaderEntry::REDUCE_PARTIAL, ShaderEntry::REDUCE_FINAL]);
        v
    }
}

/// A kernel's parameter block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Params {
    /// The kernel takes only the grid and step uniforms.
    None,
    /// `advect_velocity`, `advect_cells`.
    Advect(AdvectParams),
    /// `apply_forces`.
    Forces(ForceParams),
    /// `diffuse_velocity`.
    Diffuse(DiffuseParams),
    /// `jacobi`, `jacobi_multisweep`, `sor`, `relax`.
    Jacobi(JacobiParams),
    /// The `mg_*` kernels.
    Mg(MgParams),
    /// The `cg_*` kernels.
    Cg(CgParams),
    /// `poisson_taps`.
    Taps(TapsParams),
    /// `poisson_rows`, `poisson_cols`.
    Filter(FilterParams),
}

impl Params {
    /// The bytes a GPU backend uploads (empty for [`Params::None`]).
    pub fn bytes(&self) -> &[u8] {
        match self {
            Params::None => &[],
            Params::Advect(p) => bytemuck::bytes_of(p),
            Params::Forces(p) => bytemuck::bytes_of(p),
            Params::Diffuse(p) => bytemuck::bytes_of(p),
            Params::Jacobi(p) => bytemuck::bytes_of(p),
            Params::Mg(p) => bytemuck::bytes_of(p),
            Params::Cg(p) => bytemuck::bytes_of(p),
            Params::Taps(p) => bytemuck::bytes_of(p),
            Params::Filter(p) => bytemuck::bytes_of(p),
        }
    }
}

/// One kernel invocation over named fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Dispatch {
    /// Which kernel.
    pub kernel: Kernel,
    /// One field per [`Kernel::bindings`] slot, in order.
    pub fields: Vec<FieldId>,
    /// Its parameter block.
    pub params: Params,
    /// Invocations `[x, y]` when they are not the kernel's [`Domain`] on the grid (the
    /// multigrid kernels run over a level).
    pub extent: Option<[u32; 2]>,
}

impl Dispatch {
    /// The field bound to the named slot.
    pub fn field(&self, slot: &str) -> FieldId {
        let i = self
            .kernel
            .bindings()
            .iter()
            .position(|b| b.name == slot)
            .unwrap_or_else(|| panic!("kernel {} has no slot {slot}", self.kernel.name()));
        self.fields[i]
    }
}

/// A reduction to a scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// `max |x|`; NaN when any value is NaN, else +inf when any is infinite (every backend
    /// compares the bits of |x|, so a non-finite value is never skipped).
    MaxAbs,
    /// `Σ x²`.
    SumSquares,
}

/// One operation of a schedule.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Run a kernel.
    Dispatch(Dispatch),
    /// Exchange the buffers behind two names (ping-pong, no copy).
    Swap(FieldId, FieldId),
    /// Reduce a field to a scalar stored in result slot `slot`, read back with
    /// [`crate::Backend::reductions`].
    Reduce {
        /// The field to reduce.
        field: FieldId,
        /// How.
        op: ReduceOp,
        /// Where the result goes.
        slot: usize,
    },
}

/// Result slot of [`Schedule::diagnostics`]: max |∇·u| of the current velocity.
pub const SLOT_MAX_DIVERGENCE: usize = 0;
/// Result slot: ‖b − A p‖² of the last pressure solve.
pub const SLOT_RESIDUAL_SQ: usize = 1;
/// Result slot: ‖∇·u*‖² (the right-hand side of the last solve, in divergence units).
pub const SLOT_RHS_SQ: usize = 2;
/// Result slots of [`Schedule::diagnostics`]: max |x| of each field of the state, in the order
/// of [`STATE_FIELDS`] (NaN or inf when the field holds one).
pub const SLOT_STATE_MAX: usize = 3;
/// The fields of the state whose max |x| [`Schedule::diagnostics`] reduces, from
/// [`SLOT_STATE_MAX`] on.
pub const STATE_FIELDS: [FieldId; 6] =
    [FieldId::U, FieldId::V, FieldId::Pressure, FieldId::Density, FieldId::Temperature, FieldId::Dye];

/// The ordered operations of one step (or of a diagnostic pass).
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    /// The grid uniform every kernel sees.
    pub grid: GridUniform,
    /// Operations in order.
    pub ops: Vec<Op>,
}

impl Schedule {
    fn new(grid: &Grid) -> Schedule {
        Schedule { grid: grid.uniform(), ops: Vec::new() }
    }

    fn dispatch(&mut self, kernel: Kernel, fields: &[FieldId], params: Params) {
        debug_assert_eq!(fields.len(), kernel.bindings().len(), "{}", kernel.name());
        self.ops.push(Op::Dispatch(Dispatch { kernel, fields: fields.to_vec(), params, extent: None }));
    }

    /// The dispatches, in order.
    pub fn dispatches(&self) -> impl Iterator<Item = &Dispatch> {
        self.ops.iter().filter_map(|op| match op {
            Op::Dispatch(d) => Some(d),
            _ => None,
        })
    }

    /// Number of reduction result slots the schedule writes.
    pub fn reduction_slots(&self) -> usize {
        self.ops
            .iter()
            .filter_map(|op| match op {
                Op::Reduce { slot, .. } => Some(slot + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// Compulsory memory traffic of one execution, in bytes: every binding of every dispatch
    /// read once (and written once if the kernel writes it), fields that a kernel skips (inactive
    /// cell fields of `advect_cells`) left out, and one read per reduction. Stencil neighbours
    /// are assumed to hit in cache. Divided by the time it gives the effective bandwidth that
    /// `fluid bench` compares with the device's copy bandwidth.
    pub fn bytes_moved(&self, grid: &Grid) -> u64 {
        let mut total = 0u64;
        for op in &self.ops {
            match op {
                Op::Dispatch(Dispatch { kernel: Kernel::MgCoarse, params: Params::Mg(p), .. }) => {
                    // Every array of every level it cycles, read and written once.
                    for l in crate::multigrid::levels_from(p.nx, p.ny, p.b) {
                        total += 2 * 3 * u64::from(l.cells()) * 4;
                    }
                }
                Op::Dispatch(d) if d.extent.is_some() => {
                    // Kernels over a multigrid level: each slot read (and written) once over
                    // the level's cells.
                    let [x, y] = d.extent.unwrap_or_default();
                    let cells = u64::from(x) * u64::from(y) * 4;
                    for slot in d.kernel.bindings() {
                        total += if slot.access == Access::ReadWrite { 2 * cells } else { cells };
                    }
                }
                Op::Dispatch(d) => {
                    // A fused multi-sweep dispatch moves the data of one sweep.
                    for (slot, field) in d.kernel.bindings().iter().zip(&d.fields) {
                        if let (Kernel::AdvectCells, Params::Advect(p)) = (d.kernel, d.params) {
                            let bit = match slot.name {
                                "density" | "density_out" => ADVECT_DENSITY,
                                "temperature" | "temperature_out" => ADVECT_TEMPERATURE,
                                "dye" | "dye_out" => ADVECT_DYE,
                                _ => u32::MAX,
                            };
                            if p.fields & bit == 0 {
                                continue;
                            }
                        }
                        let bytes = grid.len(*field) as u64 * 4;
                        total += if slot.access == Access::ReadWrite { 2 * bytes } else { bytes };
                    }
                }
                Op::Reduce { field, .. } => total += grid.len(*field) as u64 * 4,
                Op::Swap(..) => {}
            }
        }
        total
    }

    /// `sweeps` warm-started pressure sweeps of `solver` and nothing else (the Jacobi
    /// benchmark).
    /// `omega: None` takes the solver's default.
    pub fn jacobi_sweeps(grid: &Grid, solver: PressureSolver, omega: Option<f32>, sweeps: u32) -> Schedule {
        let mut s = Schedule::new(grid);
        let pressure =
            crate::params::Pressure { solver, iterations: sweeps, omega, warm_start: true, ..Default::default() };
        s.push_sweeps(&pressure);
        s
    }

    /// One full step:
    /// advect velocity → advect cell fields (+ dissipation) → splats and emitters →
    /// curl → forces (buoyancy, gravity, vorticity confinement, speed clamp) →
    /// implicit viscosity → divergence → pressure sweeps → gradient subtraction.
    ///
    /// The velocity is projected last, so it is divergence-free (to solver accuracy) between steps.
    pub fn step(grid: &Grid, params: &SimParams) -> Schedule {
        use FieldId::*;
        let mut s = Schedule::new(grid);
        let d = &params.dissipation;
        let mut fields = 0;
        if params.fields.density {
            fields |= ADVECT_DENSITY;
        }
        if params.fields.temperature {
            fields |= ADVECT_TEMPERATURE;
        }
        if params.fields.dye {
            fields |= ADVECT_DYE;
        }
        let advect = AdvectParams {
            order: params.advection.backtrace.order(),
            fields,
            velocity_dissipation: d.velocity,
            density_dissipation: d.density,
            temperature_dissipation: d.temperature,
            dye_dissipation: d.dye,
            ambient_temperature: params.buoyancy.ambient_temperature,
            _pad: 0,
        };
        s.dispatch(Kernel::AdvectVelocity, &[U, V, UTmp, VTmp], Params::Advect(advect));
        s.ops.push(Op::Swap(U, UTmp));
        s.ops.push(Op::Swap(V, VTmp));
        if fields != 0 {
            s.dispatch(
                Kernel::AdvectCells,
                &[U, V, Density, Temperature, Dye, DensityTmp, TemperatureTmp, DyeTmp],
                Params::Advect(advect),
            );
            for (on, a, b) in [
                (params.fields.density, Density, DensityTmp),
                (params.fields.temperature, Temperature, TemperatureTmp),
                (params.fields.dye, Dye, DyeTmp),
            ] {
                if on {
                    s.ops.push(Op::Swap(a, b));
                }
            }
        }
        s.dispatch(Kernel::Splat, &[U, V, Density, Temperature, Dye], Params::None);

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
        let any_force = forces.gravity != [0.0, 0.0]
            || forces.density_weight != 0.0
            || forces.temperature_lift != 0.0
            || forces.vorticity != 0.0
            || forces.clamp_speed != 0;
        if forces.vorticity != 0.0 {
            s.dispatch(Kernel::Curl, &[U, V, Curl], Params::None);
        }
        if any_force {
            s.dispatch(Kernel::ApplyForces, &[U, V, Density, Temperature, Curl], Params::Forces(forces));
        }

        if params.viscosity > 0.0 {
            let p = Params::Diffuse(DiffuseParams { viscosity: params.viscosity, _pad: [0; 3] });
            // The right-hand side stays in u/v; iterates alternate between the two scratch pairs.
            let pairs = [(UTmp, VTmp), (UTmp2, VTmp2)];
            let mut src = (U, V);
            for k in 0..params.viscosity_iterations as usize {
                let dst = pairs[k % 2];
                s.dispatch(Kernel::DiffuseVelocity, &[U, V, src.0, src.1, dst.0, dst.1], p);
                src = dst;
            }
            s.ops.push(Op::Swap(U, src.0));
            s.ops.push(Op::Swap(V, src.1));
        }

        s.push_projection(params);
        s
    }

    /// A step split around its pressure solve, for solves that stop at a tolerance: everything
    /// up to the divergence, and the gradient subtraction. Run the first, then [`Schedule::solve`]
    /// chunks (checking [`Schedule::residual`]), then the second.
    pub fn step_split(grid: &Grid, params: &SimParams) -> (Schedule, Schedule) {
        let full = Schedule::step(grid, params);
        let divergence = full
            .ops
            .iter()
            .rposition(|op| matches!(op, Op::Dispatch(d) if d.kernel == Kernel::Divergence))
            .unwrap_or(0);
        let before = Schedule { grid: full.grid, ops: full.ops[..=divergence].to_vec() };
        let mut after = Schedule::new(grid);
        if params.pressure.solver != PressureSolver::Relaxation {
            use FieldId::{PressureLo, U, V};
            after.dispatch(Kernel::SubtractGradient, &[U, V, FieldId::Pressure, PressureLo], Params::None);
        }
        (before, after)
    }

    /// `iterations` of the pressure solver alone, from the current pressure (`warm`) or zero;
    /// the result ends in `pressure`.
    pub fn solve(grid: &Grid, pressure: &crate::params::Pressure, iterations: u32, warm: bool) -> Schedule {
        let mut s = Schedule::new(grid);
        s.push_sweeps(&crate::params::Pressure { iterations, warm_start: warm, ..*pressure });
        s
    }

    /// [`SLOT_RESIDUAL_SQ`] and [`SLOT_RHS_SQ`] of the current pressure and divergence (writes
    /// only `scratch`).
    pub fn residual(grid: &Grid) -> Schedule {
        use FieldId::*;
        let mut s = Schedule::new(grid);
        s.dispatch(Kernel::Residual, &[Pressure, PressureLo, Divergence, Scratch], Params::None);
        s.ops.push(Op::Reduce { field: Scratch, op: ReduceOp::SumSquares, slot: SLOT_RESIDUAL_SQ });
        s.ops.push(Op::Reduce { field: Divergence, op: ReduceOp::SumSquares, slot: SLOT_RHS_SQ });
        s
    }

    /// Divergence, the pressure solve, and the gradient subtraction.
    fn push_projection(&mut self, params: &SimParams) {
        use FieldId::*;
        self.dispatch(Kernel::Divergence, &[U, V, Divergence], Params::None);
        if params.pressure.solver == PressureSolver::Relaxation {
            // The relaxation corrects the velocity itself; its pressure starts at zero each step.
            self.push_sweeps(&crate::params::Pressure { warm_start: false, ..params.pressure });
            return;
        }
        self.push_sweeps(&params.pressure);
        self.dispatch(Kernel::SubtractGradient, &[U, V, Pressure, PressureLo], Params::None);
    }

    /// The pressure sweeps of a projection, ending with the result in `pressure`.
    fn push_sweeps(&mut self, pr: &crate::params::Pressure) {
        use FieldId::*;
        let omega = pr.omega_for(self.grid.nx.max(self.grid.ny));
        let mut src = Pressure;
        let mut next = |s: &mut Schedule, kernel: Kernel, p: JacobiParams| {
            let dst = if src == Pressure { PressureTmp } else { Pressure };
            s.dispatch(kernel, &[src, Divergence, dst], Params::Jacobi(p));
            src = dst;
        };
        let cold = |k: u32| u32::from(k == 0 && !pr.warm_start);
        if pr.solver == PressureSolver::Multigrid {
            let df = pr.precision() == crate::params::Precision::DoubleFloat;
            self.push_multigrid(pr.iterations, omega, !pr.warm_start, df);
            return;
        }
        if pr.solver == PressureSolver::Mgpcg {
            self.push_mgpcg(pr.iterations, omega, !pr.warm_start);
            return;
        }
        if pr.solver == PressureSolver::PoissonFilter {
            self.push_poisson_filter(pr.iterations, pr.rank, pr.warm_start);
            return;
        }
        if pr.solver == PressureSolver::Relaxation {
            for k in 0..pr.iterations {
                let p = JacobiParams { omega, zero_initial: cold(k), colour: 0, sweeps: 1 };
                self.dispatch(Kernel::Relax, &[U, V, Pressure, UTmp, VTmp], Params::Jacobi(p));
                self.ops.push(Op::Swap(U, UTmp));
                self.ops.push(Op::Swap(V, VTmp));
            }
            return;
        }
        if pr.solver == PressureSolver::Sor {
            // One iteration: the red pass, then the black pass.
            for k in 0..pr.iterations {
                for colour in [0, 1] {
                    let p = JacobiParams { omega, zero_initial: cold(k) * (1 - colour), colour, sweeps: 1 };
                    next(self, Kernel::Sor, p);
                }
            }
        } else {
            // `jacobi-multisweep` performs up to `MULTISWEEP_MAX` sweeps per dispatch; the
            // arithmetic is that of the plain sweeps.
            let fused = pr.solver == PressureSolver::JacobiMultisweep;
            let mut done = 0;
            while done < pr.iterations {
                let sweeps = if fused { (pr.iterations - done).min(MULTISWEEP_MAX) } else { 1 };
                let p = JacobiParams { omega, zero_initial: cold(done), colour: 0, sweeps };
                next(self, if fused { Kernel::JacobiMultisweep } else { Kernel::Jacobi }, p);
                done += sweeps;
            }
        }
        if src != Pressure {
            self.ops.push(Op::Swap(Pressure, PressureTmp));
        }
    }

    /// `cycles` multigrid V-cycles between `mg_load` and `mg_store` (see [`crate::multigrid`]).
    /// `cycles` V-cycles. In double-float (`df`) each cycle solves for a correction from zero: its
    /// first step computes level 0's `b` as the residual of the double-float pressure and its last
    /// step adds the result to the pressure (on a cold start `mg_load` zeroes the pressure and
    /// loads `b` first; when the whole cycle is one `mg_coarse`, `mg_load` and `mg_store` do
    /// both). In single precision the cycles work
    /// on the pressure itself, loaded once and stored once.
    fn push_multigrid(&mut self, cycles: u32, omega: f32, cold: bool, df: bool) {
        use crate::multigrid::{LOAD_COPY, LOAD_RESIDUAL, STORE_ADD, STORE_COPY};
        use FieldId::{Divergence, Multigrid, Pressure, PressureLo};
        let levels = crate::multigrid::levels(self.grid.nx, self.grid.ny);
        let top = levels[0];
        let base = top.params();
        let (load_fields, store_fields) =
            ([Pressure, PressureLo, Divergence, Multigrid], [Multigrid, Pressure, PressureLo]);
        if df {
            for k in 0..cycles {
                let first_cold = cold && k == 0;
                // Warm: the residual is computed by the cycle's first step and the correction
                // added by its last. A cold start (which zeroes the pressure) and a cycle that is
                // one `mg_coarse` load and store in passes of their own.
                if !first_cold && self.push_vcycle_double_float(&levels, omega, false, false) {
                    continue;
                }
                let load = MgParams { colour: LOAD_RESIDUAL, zero_initial: u32::from(first_cold), ..base };
                self.dispatch_over(Kernel::MgLoad, &load_fields, load, top.nx, top.ny);
                if !self.push_vcycle_double_float(&levels, omega, false, true) {
                    self.push_vcycle(&levels, omega, false, true);
                    let store = MgParams { colour: STORE_ADD, ..base };
                    self.dispatch_over(Kernel::MgStore, &store_fields, store, top.nx, top.ny);
                }
            }
            return;
        }
        let load = MgParams { colour: LOAD_COPY, zero_initial: u32::from(cold), ..base };
        self.dispatch_over(Kernel::MgLoad, &load_fields, load, top.nx, top.ny);
        for _ in 0..cycles {
            self.push_vcycle(&levels, omega, false, false);
        }
        let store = MgParams { colour: STORE_COPY, ..base };
        self.dispatch_over(Kernel::MgStore, &store_fields, store, top.nx, top.ny);
    }

    /// The Poisson filter: `rank` separable passes reproducing `k` Jacobi sweeps (warm: plus the
    /// sweeps' action on the previous pressure). The taps are written by [`Schedule::setup`].
    fn push_poisson_filter(&mut self, k: u32, rank: u32, warm: bool) {
        use crate::poisson_filter::{F_COLS, F_ROWS, G_COLS, G_ROWS};
        use FieldId::{Divergence, Multigrid, Pressure};
        let cells = self.grid.nx * self.grid.ny;
        let taps = crate::multigrid::taps_offset(self.grid.nx, self.grid.ny);
        let base = FilterParams { rank, k, tmp: 0, q: rank * cells, ..FilterParams::default() };
        if warm {
            let rows = FilterParams { bank: taps + G_ROWS, mode: 0, ..base };
            self.dispatch(Kernel::PoissonRows, &[Pressure, Divergence, Multigrid], Params::Filter(rows));
            let cols = FilterParams { bank: taps + G_COLS, mode: 0, ..base };
            self.dispatch(Kernel::PoissonCols, &[Multigrid, Pressure], Params::Filter(cols));
        }
        let rows = FilterParams { bank: taps + F_ROWS, mode: 1, ..base };
        self.dispatch(Kernel::PoissonRows, &[Pressure, Divergence, Multigrid], Params::Filter(rows));
        let cols = FilterParams { bank: taps + F_COLS, mode: if warm { 2 } else { 1 }, ..base };
        self.dispatch(Kernel::PoissonCols, &[Multigrid, Pressure], Params::Filter(cols));
    }

    /// What a solver needs written once before its first solve: the Poisson filter's taps
    /// (empty for the other solvers). [`Schedule::initialize`] includes it.
    pub fn setup(grid: &Grid, params: &SimParams) -> Schedule {
        let mut s = Schedule::new(grid);
        let pr = &params.pressure;
        if pr.solver == PressureSolver::PoissonFilter {
            let omega = pr.omega_for(grid.nx.max(grid.ny));
            let (taps, _, _) = crate::poisson_filter::taps(pr.iterations, omega, pr.rank);
            let start = crate::multigrid::taps_offset(grid.nx, grid.ny);
            let used = (2 * pr.iterations + 1) as usize;
            for bank in 0..4 * crate::poisson_filter::MAX_RANK as usize {
                let filter = bank * crate::poisson_filter::MAX_TAPS as usize;
                for chunk in (0..used).step_by(8) {
                    let count = (used - chunk).min(8);
                    let mut t = [0.0f32; 8];
                    t[..count].copy_from_slice(&taps[filter + chunk..filter + chunk + count]);
                    let offset = start + (filter + chunk) as u32;
                    let p = TapsParams { offset, count: count as u32, _pad: [0; 2], taps: t };
                    s.dispatch(Kernel::PoissonTaps, &[FieldId::Multigrid], Params::Taps(p));
                    if let Some(Op::Dispatch(d)) = s.ops.last_mut() {
                        d.extent = Some([1, 1]);
                    }
                }
            }
        }
        s
    }

    /// `iterations` of conjugate gradients preconditioned by one symmetric V-cycle from zero,
    /// in chunks of [`crate::multigrid::CG_RESTART`] (each starting from the double-float
    /// pressure the previous one stored).
    fn push_mgpcg(&mut self, iterations: u32, omega: f32, cold: bool) {
        use FieldId::{Divergence, Multigrid, Pressure, PressureLo};
        let levels = crate::multigrid::levels(self.grid.nx, self.grid.ny);
        let top = levels[0];
        let l = crate::multigrid::cg_layout(self.grid.nx, self.grid.ny);
        let base = crate::multigrid::cg_params(self.grid.nx, self.grid.ny);
        let count = base.count;
        let cg = |s: &mut Schedule, kernel: Kernel, fields: &[FieldId], p: CgParams, extent: [u32; 2]| {
            s.dispatch(kernel, fields, Params::Cg(p));
            if let Some(Op::Dispatch(d)) = s.ops.last_mut() {
                d.extent = Some(extent);
            }
        };
        let dot = |s: &mut Schedule, a: u32, b: u32, slot: u32| {
            for (flag, extent) in [(0, [count * 256, 1]), (1, [256, 1])] {
                cg(s, Kernel::CgDot, &[Multigrid], CgParams { x: a, z: b, slot, flag, ..base }, extent);
            }
        };
        let whole = [top.nx, top.ny];
        let store =
            MgParams { nx: top.nx, ny: top.ny, p: l.x, colour: crate::multigrid::STORE_PAIR, ..MgParams::default() };
        for k in 0..iterations {
            if k % crate::multigrid::CG_RESTART == 0 {
                if k > 0 {
                    self.dispatch_over(Kernel::MgStore, &[Multigrid, Pressure, PressureLo], store, top.nx, top.ny);
                }
                let init = CgParams { flag: u32::from(cold && k == 0), ..base };
                cg(self, Kernel::CgInit, &[Pressure, PressureLo, Divergence, Multigrid], init, whole);
            }
            let first = k % crate::multigrid::CG_RESTART == 0;
            let slot = k % 2;
            self.push_vcycle(&levels, omega, true, true);
            dot(self, top.b, top.p, slot);
            cg(self, Kernel::CgDirection, &[Multigrid], CgParams { slot, flag: u32::from(first), ..base }, whole);
            cg(self, Kernel::CgApply, &[Multigrid], base, whole);
            dot(self, l.d, l.q, 2);
            cg(self, Kernel::CgUpdate, &[Multigrid], CgParams { slot, ..base }, whole);
        }
        self.dispatch_over(Kernel::MgStore, &[Multigrid, Pressure, PressureLo], store, top.nx, top.ny);
    }

    /// One V-cycle over `levels` (see [`crate::multigrid::v_cycle`]).
    fn push_vcycle(&mut self, levels: &[crate::multigrid::Level], omega: f32, symmetric: bool, from_zero: bool) {
        self.push_steps(crate::multigrid::v_cycle(levels, omega, symmetric, from_zero, true));
    }

    /// [`Schedule::push_vcycle`] of a double-float solve, when level 0 is not part of the coarse
    /// step (returns `false` and emits nothing otherwise): level 0's first step (its
    /// pre-smoothing pair) computes the level's `b` from the double-float pressure unless
    /// `loaded` ([`crate::multigrid::SMOOTH2_LOAD_RESIDUAL`]), and its last step (the
    /// post-smoothing pair) adds the result to the pressure
    /// ([`crate::multigrid::SMOOTH2_ACCUMULATE`]).
    fn push_vcycle_double_float(
        &mut self,
        levels: &[crate::multigrid::Level],
        omega: f32,
        symmetric: bool,
        loaded: bool,
    ) -> bool {
        use crate::multigrid::Step;
        let mut steps = crate::multigrid::v_cycle(levels, omega, symmetric, true, true);
        let (Some(Step::Smooth2(_)), Some(Step::Smooth2(_))) = (steps.first(), steps.last()) else {
            return false;
        };
        if let Some(Step::Smooth2(p)) = steps.last_mut() {
            p.colour |= crate::multigrid::SMOOTH2_ACCUMULATE;
        }
        if !loaded && let Some(Step::Smooth2(p)) = steps.first_mut() {
            p.colour |= crate::multigrid::SMOOTH2_LOAD_RESIDUAL;
        }
        self.push_steps(steps);
        true
    }

    /// The dispatches of V-cycle steps.
    fn push_steps(&mut self, steps: Vec<crate::multigrid::Step>) {
        use crate::multigrid::Step;
        for step in steps {
            match step {
                Step::Smooth(p) => self.dispatch_over(Kernel::MgSmooth, &[FieldId::Multigrid], p, p.nx, p.ny),
                Step::Smooth2(p) => {
                    let fields = [FieldId::Multigrid, FieldId::Pressure, FieldId::PressureLo, FieldId::Divergence];
                    self.dispatch_over(Kernel::MgSmooth2, &fields, p, p.nx, p.ny);
                }
                Step::Restrict(p) => self.dispatch_over(Kernel::MgRestrict, &[FieldId::Multigrid], p, p.cnx, p.cny),
                Step::Prolong(p) => self.dispatch_over(Kernel::MgProlong, &[FieldId::Multigrid], p, p.nx, p.ny),
                // One workgroup.
                Step::Coarse(p) => {
                    let threads = crate::multigrid::COARSE_THREADS;
                    self.dispatch_over(Kernel::MgCoarse, &[FieldId::Multigrid], p, threads, 1);
                }
            }
        }
    }

    /// A multigrid kernel over `x × y` invocations (a level, or `mg_coarse`'s one workgroup).
    fn dispatch_over(&mut self, kernel: Kernel, fields: &[FieldId], p: MgParams, x: u32, y: u32) {
        self.dispatch(kernel, fields, Params::Mg(p));
        if let Some(Op::Dispatch(d)) = self.ops.last_mut() {
            d.extent = Some([x, y]);
        }
    }

    /// What [`crate::Scene`] setup runs once: the initial splats, then a projection so the first
    /// step starts from a divergence-free velocity.
    pub fn initialize(grid: &Grid, params: &SimParams) -> Schedule {
        use FieldId::*;
        let mut s = Schedule::setup(grid, params);
        s.dispatch(Kernel::Splat, &[U, V, Density, Temperature, Dye], Params::None);
        s.push_projection(params);
        s
    }

    /// Only the projection of the current velocity (used by tests and the solver benchmarks).
    pub fn projection(grid: &Grid, params: &SimParams) -> Schedule {
        let mut s = Schedule::new(grid);
        s.push_projection(params);
        s
    }

    /// The vorticity of the current velocity into `curl`. The step computes `curl` only as
    /// scratch of vorticity confinement (and before the forces and the projection change the
    /// velocity); readers of the field run this first.
    pub fn curl(grid: &Grid) -> Schedule {
        use FieldId::*;
        let mut s = Schedule::new(grid);
        s.dispatch(Kernel::Curl, &[U, V, Curl], Params::None);
        s
    }

    /// Only max |x| of each of [`STATE_FIELDS`] from [`SLOT_STATE_MAX`] on: what tells a
    /// blown-up or runaway state, at the cost of one read of each field.
    pub fn state_check(grid: &Grid) -> Schedule {
        let mut s = Schedule::new(grid);
        for (k, field) in STATE_FIELDS.into_iter().enumerate() {
            s.ops.push(Op::Reduce { field, op: ReduceOp::MaxAbs, slot: SLOT_STATE_MAX + k });
        }
        s
    }

    /// Diagnostics of the current state: [`SLOT_MAX_DIVERGENCE`], [`SLOT_RESIDUAL_SQ`],
    /// [`SLOT_RHS_SQ`] and max |x| of each of [`STATE_FIELDS`] from [`SLOT_STATE_MAX`] on.
    /// Writes only the `scratch` field.
    pub fn diagnostics(grid: &Grid) -> Schedule {
        use FieldId::*;
        let mut s = Schedule::new(grid);
        s.dispatch(Kernel::Divergence, &[U, V, Scratch], Params::None);
        s.ops.push(Op::Reduce { field: Scratch, op: ReduceOp::MaxAbs, slot: SLOT_MAX_DIVERGENCE });
        s.dispatch(Kernel::Residual, &[Pressure, PressureLo, Divergence, Scratch], Params::None);
        s.ops.push(Op::Reduce { field: Scratch, op: ReduceOp::SumSquares, slot: SLOT_RESIDUAL_SQ });
        s.ops.push(Op::Reduce { field: Divergence, op: ReduceOp::SumSquares, slot: SLOT_RHS_SQ });
        for (k, field) in STATE_FIELDS.into_iter().enumerate() {
            s.ops.push(Op::Reduce { field, op: ReduceOp::MaxAbs, slot: SLOT_STATE_MAX + k });
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Boundary;

    /// The traffic model that `fluid bench`'s GB/s divides by time, on schedules whose bytes
    /// are known by hand (37 × 22 cells, f32): a Jacobi sweep reads pressure and divergence and
    /// writes the new pressure, 3 fields; a reduction reads its field once, u with its
    /// `nx + 1` faces per row; the gradient subtraction reads and writes u and v and reads both
    /// pressure words.
    #[test]
    fn bytes_moved_counts_each_binding_once_and_each_reduction() {
        let g = Grid::new(37, 22, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        let (cells, u, v) = (37 * 22 * 4, 38 * 22 * 4, 37 * 23 * 4);
        let sweeps = Schedule::jacobi_sweeps(&g, PressureSolver::Jacobi, None, 5);
        assert_eq!(sweeps.bytes_moved(&g), 5 * 3 * cells);
        let reduce = |field, slot| Op::Reduce { field, op: ReduceOp::MaxAbs, slot };
        let mut s = Schedule::new(&g);
        s.ops = vec![reduce(FieldId::U, 0), reduce(FieldId::Density, 1)];
        assert_eq!(s.bytes_moved(&g), u + cells);
        let mut s = Schedule::new(&g);
        s.dispatch(
            Kernel::SubtractGradient,
            &[FieldId::U, FieldId::V, FieldId::Pressure, FieldId::PressureLo],
            Params::None,
        );
        assert_eq!(s.bytes_moved(&g), 2 * (u + v) + 2 * cells);
        // Over a multigrid level, each slot once over the level's cells (`mg` read and written);
        // `mg_coarse` reads and writes the three arrays of every level it cycles: from 16 × 12,
        // the levels 16 × 12, 8 × 6 and 4 × 3, 252 cells.
        let mut s = Schedule::new(&g);
        let level = MgParams { nx: 16, ny: 12, ..MgParams::default() };
        s.dispatch_over(Kernel::MgSmooth, &[FieldId::Multigrid], level, 9, 5);
        assert_eq!(s.bytes_moved(&g), 2 * 9 * 5 * 4);
        let mut s = Schedule::new(&g);
        s.dispatch_over(Kernel::MgCoarse, &[FieldId::Multigrid], level, crate::multigrid::COARSE_THREADS, 1);
        assert_eq!(s.bytes_moved(&g), 2 * 3 * 252 * 4);
    }

    #[test]
    fn every_dispatch_binds_every_slot() {
        let g = Grid::new(8, 6, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        let p = SimParams { viscosity: 0.1, vorticity: 1.0, ..SimParams::default() };
        for s in [Schedule::step(&g, &p), Schedule::diagnostics(&g)] {
            for d in s.dispatches() {
                assert_eq!(d.fields.len(), d.kernel.bindings().len(), "{}", d.kernel.name());
            }
        }
    }

    /// The implicit viscosity costs nothing when the viscosity is zero (the default): no
    /// diffusion dispatch and no swap. A positive one runs its `viscosity_iterations`, then two
    /// swaps put the result in u and v.
    #[test]
    fn zero_viscosity_schedules_no_diffusion() {
        let g = Grid::new(8, 6, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        let diffusion = |viscosity: f32| {
            let s = Schedule::step(&g, &SimParams { viscosity, viscosity_iterations: 7, ..SimParams::default() });
            (s.dispatches().filter(|d| d.kernel == Kernel::DiffuseVelocity).count(), s.ops.len())
        };
        let (none, ops) = diffusion(0.0);
        assert_eq!(none, 0);
        assert_eq!(diffusion(1e-3), (7, ops + 7 + 2));
    }

    #[test]
    fn sor_iterations_are_a_red_and_a_black_pass_with_the_default_optimal_omega() {
        let g = Grid::new(40, 30, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        let mut p = SimParams::default();
        p.pressure.solver = PressureSolver::Sor;
        p.pressure.iterations = 3;
        p.pressure.warm_start = false;
        let s = Schedule::projection(&g, &p);
        let passes: Vec<JacobiParams> = s
            .dispatches()
            .filter(|d| d.kernel == Kernel::Sor)
            .map(|d| match d.params {
                Params::Jacobi(j) => j,
                _ => panic!("sor without JacobiParams"),
            })
            .collect();
        assert_eq!(passes.iter().map(|j| j.colour).collect::<Vec<_>>(), [0, 1, 0, 1, 0, 1]);
        assert_eq!(passes.iter().map(|j| j.zero_initial).collect::<Vec<_>>(), [1, 0, 0, 0, 0, 0]);
        // Three iterations: the cap 1 + 0.01^(1/3) is below the asymptotic optimum 1.855.
        let capped = 1.0 + 0.01f32.powf(1.0 / 3.0);
        assert!(passes.iter().all(|j| (j.omega - capped).abs() < 1e-6), "{}", passes[0].omega);
        p.pressure.iterations = 200;
        let s = Schedule::projection(&g, &p);
        let optimum = 2.0 / (1.0 + (std::f32::consts::PI / 40.0).sin());
        match s.dispatches().find(|d| d.kernel == Kernel::Sor).map(|d| d.params) {
            Some(Params::Jacobi(j)) => assert!((j.omega - optimum).abs() < 1e-6, "{}", j.omega),
            other => panic!("{other:?}"),
        }
        assert_eq!(s.dispatches().last().expect("dispatch").field("pressure"), FieldId::Pressure);
    }

    #[test]
    fn multigrid_is_load_v_cycles_store_over_the_levels() {
        // Levels 0 (150 × 90) and 1 (75 × 45) by dispatch (two smoothing pairs each, which
        // restrict and prolong), from level 2 (38 × 23) on in one `mg_coarse` per V-cycle.
        let g = Grid::new(150, 90, 1.0, Boundary::Wall, Boundary::Periodic).expect("grid");
        let mut p = SimParams::default();
        p.pressure.solver = PressureSolver::Multigrid;
        p.pressure.iterations = 2;
        p.pressure.precision = Some(crate::params::Precision::Single);
        let s = Schedule::projection(&g, &p);
        let kernels: Vec<Kernel> = s.dispatches().map(|d| d.kernel).collect();
        assert_eq!(kernels[0], Kernel::Divergence);
        assert_eq!(kernels[1], Kernel::MgLoad);
        assert_eq!(kernels[kernels.len() - 2], Kernel::MgStore);
        assert_eq!(kernels[kernels.len() - 1], Kernel::SubtractGradient);
        let levels = crate::multigrid::levels(150, 90);
        assert!(!crate::multigrid::fits_coarse(&levels[1]));
        assert!(crate::multigrid::fits_coarse(&levels[2]));
        let count = |k: Kernel| kernels.iter().filter(|x| **x == k).count();
        assert_eq!((count(Kernel::MgRestrict), count(Kernel::MgProlong), count(Kernel::MgCoarse)), (0, 0, 2));
        assert_eq!(count(Kernel::MgSmooth2), 2 * 2 * 2, "a pre- and a post-smoothing pair per V-cycle on levels 0, 1");
        assert_eq!(count(Kernel::MgSmooth), 0);
        for d in s.dispatches().filter(|d| d.kernel.name().starts_with("mg_")) {
            let [x, y] = d.extent.expect("extent");
            if d.kernel == Kernel::MgCoarse {
                // One workgroup, from level 2.
                assert_eq!([x, y], [crate::multigrid::COARSE_THREADS, 1]);
                assert!(
                    matches!(d.params, Params::Mg(m) if (m.nx, m.ny, m.b) == (levels[2].nx, levels[2].ny, levels[2].b))
                );
            } else {
                // Every other multigrid dispatch runs over a level of the hierarchy.
                assert!(levels.iter().any(|l| (l.nx, l.ny) == (x, y)), "{x}x{y}");
            }
        }
        assert_eq!(s.dispatches().last().expect("dispatch").field("pressure"), FieldId::Pressure);
    }

    /// In double-float each V-cycle starts from zero: its first step computes level 0's `b` from
    /// the double-float pressure and its last adds the correction to the pressure; a cold start
    /// loads (and zeroes the pressure) with `mg_load` first; a grid whose whole cycle is one
    /// `mg_coarse` loads and stores in passes of their own.
    #[test]
    fn double_float_multigrid_cycles_are_corrections_added_to_the_pressure() {
        use crate::multigrid::{LOAD_RESIDUAL, SMOOTH2_ACCUMULATE, SMOOTH2_LOAD_RESIDUAL, STORE_ADD};
        let mg = |d: &Dispatch| match d.params {
            Params::Mg(m) => m,
            _ => panic!("{} without MgParams", d.kernel.name()),
        };
        let g = Grid::new(150, 90, 1.0, Boundary::Wall, Boundary::Periodic).expect("grid");
        for warm in [false, true] {
            let mut p = SimParams::default();
            p.pressure.solver = PressureSolver::Multigrid;
            p.pressure.iterations = 3;
            p.pressure.warm_start = warm;
            let s = Schedule::projection(&g, &p);
            let ds: Vec<&Dispatch> = s.dispatches().filter(|d| d.kernel.name().starts_with("mg_")).collect();
            assert!(ds.iter().all(|d| d.kernel != Kernel::MgStore));
            let loads: Vec<&&Dispatch> = ds.iter().filter(|d| d.kernel == Kernel::MgLoad).collect();
            if warm {
                assert!(loads.is_empty(), "a warm solve computes its residuals in the smoothing");
            } else {
                assert_eq!(loads.len(), 1);
                assert_eq!((mg(loads[0]).colour, mg(loads[0]).zero_initial), (LOAD_RESIDUAL, 1));
                assert_eq!(ds[0].kernel, Kernel::MgLoad);
            }
            // Each cycle: level 0's pre-smoothing pair (from zero) opens it, its post-smoothing
            // pair (accumulating) closes it.
            let level0 = |d: &Dispatch| d.kernel == Kernel::MgSmooth2 && mg(d).nx == 150;
            let pairs: Vec<MgParams> = ds.iter().filter(|d| level0(d)).map(|d| mg(d)).collect();
            assert_eq!(pairs.len(), 6);
            for (c, pair) in pairs.chunks(2).enumerate() {
                let (pre, post) = (pair[0], pair[1]);
                assert_eq!(pre.zero_initial, 1);
                let loads_itself = pre.colour & SMOOTH2_LOAD_RESIDUAL != 0;
                assert_eq!(loads_itself, warm || c > 0, "cycle {c}, warm {warm}");
                assert_eq!(pre.colour & SMOOTH2_ACCUMULATE, 0);
                assert_ne!(post.colour & SMOOTH2_ACCUMULATE, 0);
                assert_eq!(post.colour & SMOOTH2_LOAD_RESIDUAL, 0);
            }
            let last = ds.last().expect("dispatch");
            assert!(level0(last) && mg(last).colour & SMOOTH2_ACCUMULATE != 0);
        }
        // A grid whose whole cycle is one mg_coarse.
        let mut p = SimParams::default();
        p.pressure.solver = PressureSolver::Multigrid;
        p.pressure.iterations = 3;
        let g = Grid::new(24, 20, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        let kernels: Vec<Kernel> = Schedule::projection(&g, &p).dispatches().map(|d| d.kernel).collect();
        let cycle = [Kernel::MgLoad, Kernel::MgCoarse, Kernel::MgStore];
        assert_eq!(kernels[1..kernels.len() - 1], [cycle, cycle, cycle].concat());
        let s = Schedule::projection(&g, &p);
        assert!(s.dispatches().filter(|d| d.kernel == Kernel::MgStore).all(|d| mg(d).colour == STORE_ADD));
    }

    #[test]
    fn mgpcg_iterations_are_a_symmetric_v_cycle_two_dots_and_updates() {
        let g = Grid::new(150, 90, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        let mut p = SimParams::default();
        p.pressure.solver = PressureSolver::Mgpcg;
        p.pressure.iterations = 3;
        let s = Schedule::projection(&g, &p);
        let count = |k: Kernel| s.dispatches().filter(|d| d.kernel == k).count();
        assert_eq!(count(Kernel::CgInit), 1);
        assert_eq!(count(Kernel::CgDot), 3 * 2 * 2, "two dots of two passes per iteration");
        assert_eq!((count(Kernel::CgDirection), count(Kernel::CgApply), count(Kernel::CgUpdate)), (3, 3, 3));
        let store = s.dispatches().find(|d| d.kernel == Kernel::MgStore).expect("store");
        let x = crate::multigrid::cg_layout(150, 90).x;
        assert!(matches!(store.params, Params::Mg(m) if m.p == x), "the pressure is CG's x");
        // The first pass of each preconditioning cycle starts from zero.
        let zero_starts = s
            .dispatches()
            .filter(|d| matches!(d.params, Params::Mg(m) if d.kernel == Kernel::MgSmooth2 && m.zero_initial == 1))
            .count();
        assert_eq!(zero_starts, 3);
        // The coarse part of each preconditioning cycle is symmetric and starts from the
        // restricted residual (its p is zeroed by the restriction).
        let coarse: Vec<MgParams> = s
            .dispatches()
            .filter(|d| d.kernel == Kernel::MgCoarse)
            .map(|d| match d.params {
                Params::Mg(m) => m,
                _ => panic!("mg_coarse without MgParams"),
            })
            .collect();
        assert_eq!(coarse.len(), 3);
        assert!(coarse.iter().all(|m| m.colour == 1 && m.zero_initial == 0), "{coarse:?}");
    }

    #[test]
    fn pressure_ends_in_its_own_buffer_name() {
        let g = Grid::new(8, 6, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
        for iterations in [1, 2, 7, 8, 19] {
            let mut p = SimParams::default();
            p.pressure.iterations = iterations;
            let s = Schedule::step(&g, &p);
            let sweeps = s.dispatches().filter(|d| d.kernel == Kernel::Jacobi).count();
            assert_eq!(sweeps, iterations as usize);
            p.pressure.solver = PressureSolver::JacobiMultisweep;
            let s2 = Schedule::step(&g, &p);
            let fused: Vec<u32> = s2
                .dispatches()
                .filter(|d| d.kernel == Kernel::JacobiMultisweep)
                .map(|d| match d.params {
                    Params::Jacobi(p) => p.sweeps,
                    _ => panic!("jacobi_multisweep without JacobiParams"),
                })
                .collect();
            assert_eq!(fused.iter().sum::<u32>(), iterations);
            assert!(fused.iter().all(|&n| (1..=MULTISWEEP_MAX).contains(&n)), "{fused:?}");
            assert_eq!(fused.len() as u32, iterations.div_ceil(MULTISWEEP_MAX));
            assert_eq!(s2.dispatches().filter(|d| d.kernel == Kernel::Jacobi).count(), 0);
            assert_eq!(s2.dispatches().last().expect("dispatch").field("pressure"), FieldId::Pressure);
            let last = s.dispatches().last().expect("dispatch");
            assert_eq!(last.kernel, Kernel::SubtractGradient);
            assert_eq!(last.field("pressure"), FieldId::Pressure);
        }
    }
}
