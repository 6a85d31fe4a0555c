//! The grid model's kernels: one descriptor each, the one table of what every backend runs.
//!
//! Adding a kernel: its WGSL file (`fluid-shaders/shaders/grid/<name>.wgsl`), its CPU twin
//! (`fluid-cpu/src/kernels/<name>.rs`, listed in its table), its descriptor here (and in
//! [`ALL`]), and the step code that schedules it.

use crate::grid::pressure::layout::{COARSE_THREADS, SMOOTH2_TILE};
use crate::grid::uniforms::{
    AdvectParams, BurnParams, CgParams, ChannelParams, DiffuseParams, DyeParams, FilterParams, ForceParams,
    JacobiParams, MULTISWEEP_TILE, MgParams, SharpParams, SplatParams, TapsParams, TensionParams, TurbulenceParams,
};
use swirly_ir::kernel::Access::{Read as R, ReadWrite as RW, Write as W};
use swirly_ir::kernel::{Binding, Domain, Kernel, KernelDesc, ParamsDesc, Workgroup};

const fn f(name: &'static str, access: swirly_ir::kernel::Access) -> Binding {
    Binding::f32(name, access)
}

/// A kernel over cells or faces in the backend's 2D workgroups.
const fn tiled(
    name: &'static str,
    bindings: &'static [Binding],
    params: Option<ParamsDesc>,
    domain: Domain,
    doc: &'static str,
) -> KernelDesc {
    KernelDesc { name, module: name, bindings, params, records: false, domain, workgroup: Workgroup::Tiled, doc }
}

const ADVECT: Option<ParamsDesc> = Some(ParamsDesc::of::<AdvectParams>());
const SHARP: Option<ParamsDesc> = Some(ParamsDesc::of::<SharpParams>());
const DYE: Option<ParamsDesc> = Some(ParamsDesc::of::<DyeParams>());
const JACOBI_PARAMS: Option<ParamsDesc> = Some(ParamsDesc::of::<JacobiParams>());
const MG: Option<ParamsDesc> = Some(ParamsDesc::of::<MgParams>());
const CG: Option<ParamsDesc> = Some(ParamsDesc::of::<CgParams>());
const FILTER: Option<ParamsDesc> = Some(ParamsDesc::of::<FilterParams>());
const SWEEP: &[Binding] = &[f("pressure", R), f("divergence", R), f("pressure_out", W)];
const SWEEP_FACES: &[Binding] = &[
    f("pressure", R),
    f("divergence", R),
    f("pressure_out", W),
    Binding::vec2("u_faces", R).optional(),
    Binding::vec2("v_faces", R).optional(),
];
const MG_ONLY: &[Binding] = &[f("mg", RW)];

static ADVECT_VELOCITY_DESC: KernelDesc = tiled(
    "advect_velocity",
    &[f("u", R), f("v", R), f("u_out", W), f("v_out", W)],
    ADVECT,
    Domain::Faces,
    "semi-Lagrangian advection of u and v by themselves, with their dissipation",
);
static ADVECT_CHANNELS_DESC: KernelDesc = tiled(
    "advect_channels",
    &[
        f("u", R),
        f("v", R),
        f("q0", R).optional(),
        f("q1", R).optional(),
        Binding::vec4("rgba", R).optional(),
        f("q0_out", W).optional(),
        f("q1_out", W).optional(),
        Binding::vec4("rgba_out", W).optional(),
    ],
    Some(ParamsDesc::of::<ChannelParams>()),
    Domain::Given,
    "semi-Lagrangian advection of up to two scalar channels and an RGBA one on one lattice, one \
     backtrace per cell, each channel with its dissipation and what an inflow carries of it",
);
static BACK_VELOCITY_DESC: KernelDesc = tiled(
    "back_velocity",
    &[f("u", R), f("v", R), f("u_hat", R), f("v_hat", R), f("u_back", W), f("v_back", W)],
    SHARP,
    Domain::Faces,
    "the backward half of a round trip: the advected velocity traced forward, its dissipation undone",
);
static BACK_CELLS_DESC: KernelDesc = tiled(
    "back_cells",
    &[
        f("u", R),
        f("v", R),
        f("hat", R).optional(),
        f("q_back", W).optional(),
        Binding::vec4("dye_hat", R).optional(),
        Binding::vec4("dye_back", W).optional(),
    ],
    SHARP,
    Domain::Cells,
    "the backward half of a round trip: an advected scalar and the dye traced forward",
);
static SHARP_VELOCITY_DESC: KernelDesc = tiled(
    "sharp_velocity",
    &[f("u", R), f("v", R), f("u_back", R).optional(), f("v_back", R).optional(), f("u_out", RW), f("v_out", RW)],
    SHARP,
    Domain::Faces,
    "MacCormack, BFECC (limited to the stencil's range) or monotone cubic value of the velocity",
);
static SHARP_CELLS_DESC: KernelDesc = tiled(
    "sharp_cells",
    &[
        f("u", R),
        f("v", R),
        f("q", R).optional(),
        f("q_back", R).optional(),
        f("q_out", RW).optional(),
        Binding::vec4("dye", R).optional(),
        Binding::vec4("dye_back", R).optional(),
        Binding::vec4("dye_out", RW).optional(),
    ],
    SHARP,
    Domain::Cells,
    "MacCormack, BFECC (limited to the stencil's range) or monotone cubic value of a scalar and the dye",
);
static CURVATURE_DESC: KernelDesc = tiled(
    "curvature",
    &[f("density", R), f("kappa_h", W)],
    None,
    Domain::Cells,
    "the curvature κ = −∇·(∇ρ/|∇ρ|) of the density's level sets, from normals at the cell corners",
);
static SURFACE_TENSION_DESC: KernelDesc = tiled(
    "surface_tension",
    &[f("density", R), f("kappa_h", R), f("u", RW), f("v", RW)],
    Some(ParamsDesc::of::<TensionParams>()),
    Domain::Faces,
    "surface tension σ κ ∇ρ on every open face",
);
static BURN_DESC: KernelDesc = tiled(
    "burn",
    &[f("fuel", RW), f("temperature", RW), f("density", RW).optional(), f("expansion", W).optional()],
    Some(ParamsDesc::of::<BurnParams>()),
    Domain::Cells,
    "fuel at or above the ignition temperature burns into heat, smoke and (optionally) a divergence source",
);
static EXPAND_DESC: KernelDesc = tiled(
    "expand",
    &[f("expansion", R), f("divergence", RW)],
    None,
    Domain::Cells,
    "the combustion's divergence source taken from the projection's right-hand side",
);
static SPLAT_DESC: KernelDesc = KernelDesc {
    name: "splat",
    module: "splat",
    bindings: &[
        f("u", RW),
        f("v", RW),
        f("density", RW).optional(),
        f("temperature", RW).optional(),
        Binding::vec4("dye", RW).optional(),
        Binding::vec2("u_faces", R).optional(),
        Binding::vec2("v_faces", R).optional(),
    ],
    params: DYE,
    records: true,
    domain: Domain::Faces,
    workgroup: Workgroup::Tiled,
    doc: "the step's splats added to velocity, density, temperature and dye",
};
static SPLAT_CELLS_DESC: KernelDesc = KernelDesc {
    name: "splat_cells",
    module: "splat_cells",
    bindings: &[
        f("q0", RW).optional(),
        f("q1", RW).optional(),
        Binding::vec4("rgba", RW).optional(),
        f("solid", R).optional(),
        FACES[0],
        FACES[1],
    ],
    params: Some(ParamsDesc::of::<SplatParams>()),
    records: true,
    domain: Domain::Given,
    workgroup: Workgroup::Tiled,
    doc: "the step's splats added to up to two scalar channels and an RGBA one on one lattice (those `splat` \
          does not take with the velocity: within it they would bind more storage buffers than portable \
          devices allow); a finer lattice first cleared where its cell is wholly solid",
};
static COARSE_DENSITY_DESC: KernelDesc = tiled(
    "coarse_density",
    &[f("density", R), f("density_coarse", W), f("mean", W)],
    DYE,
    Domain::Cells,
    "the finer density's mean over each velocity cell, twice (one copy kept for `fine_soot`)",
);
static FINE_SOOT_DESC: KernelDesc = tiled(
    "fine_soot",
    &[f("density", RW), f("density_coarse", R), f("mean", R)],
    DYE,
    Domain::Given,
    "what combustion added to each velocity cell's density added to its finer cells",
);
static CURL_DESC: KernelDesc = tiled(
    "curl",
    &[f("u", R), f("v", R), f("curl", W)],
    None,
    Domain::Cells,
    "vorticity ∂v/∂x − ∂u/∂y at cell centres",
);
static APPLY_FORCES_DESC: KernelDesc = tiled(
    "apply_forces",
    &[
        f("u", RW),
        f("v", RW),
        f("density", R).optional(),
        f("temperature", R).optional(),
        f("curl", R),
        f("solid", R).optional(),
    ],
    Some(ParamsDesc::of::<ForceParams>()),
    Domain::Faces,
    "gravity, buoyancy and vorticity confinement on the faces (none from or in solid cells)",
);
static TURBULENCE_DESC: KernelDesc = tiled(
    "turbulence",
    &[f("u", RW), f("v", RW), f("mask", R).optional(), FACES[0], FACES[1]],
    Some(ParamsDesc::of::<TurbulenceParams>()),
    Domain::Faces,
    "curl-noise turbulence on the faces (optionally weighted by a cell field; open parts with obstacles)",
);
static CLAMP_SPEED_DESC: KernelDesc = tiled(
    "clamp_speed",
    &[f("u", R), f("v", R), f("u_out", W), f("v_out", W)],
    Some(ParamsDesc::of::<ForceParams>()),
    Domain::Faces,
    "each face scaled so that the speed there, with the other component averaged, is at most max_speed",
);
static DIFFUSE_VELOCITY_DESC: KernelDesc = tiled(
    "diffuse_velocity",
    &[f("u0", R), f("v0", R), f("u", R), f("v", R), f("u_out", W), f("v_out", W), FACES[0], FACES[1]],
    Some(ParamsDesc::of::<DiffuseParams>()),
    Domain::Faces,
    "one Jacobi sweep of implicit viscosity (I − ν dt ∇²) u = u₀ (obstacles no-slip or free-slip)",
);
static DIFFUSE_TEMPERATURE_DESC: KernelDesc = tiled(
    "diffuse_temperature",
    &[f("t0", R), f("t", R), f("t_out", W), FACES[0], FACES[1], f("held", R).optional()],
    Some(ParamsDesc::of::<DiffuseParams>()),
    Domain::Cells,
    "one Jacobi sweep of implicit heat diffusion (I − κ dt ∇²) T = T₀ (walls, open sides and obstacles \
     insulate unless held at a temperature)",
);
static HOLD_HEAT_DESC: KernelDesc = tiled(
    "hold_heat",
    &[Binding::vec4("obstacles", R), f("temperature", RW), f("held", W)],
    None,
    Domain::Cells,
    "the cells whose centre lies inside an obstacle held at a temperature: marked, and set to it",
);
static RASTERISE_SOLIDS_DESC: KernelDesc = tiled(
    "rasterise_solids",
    &[
        Binding::vec4("obstacles", R),
        Binding::vec2("u_faces", W),
        Binding::vec2("v_faces", W),
        f("solid", W),
        f("density", RW).optional(),
        f("temperature", RW).optional(),
        Binding::vec4("dye", RW).optional(),
        f("fuel", RW).optional(),
    ],
    ADVECT,
    Domain::Faces,
    "the obstacles where they stand at the step's end: each face's open fraction and solid velocity, \
     each cell's solid fraction; the cell fields of cells wholly inside zeroed",
);
/// The faces' geometry, an optional pair (absent without obstacles).
const FACES: [Binding; 2] = [Binding::vec2("u_faces", R).optional(), Binding::vec2("v_faces", R).optional()];
static DIVERGENCE_DESC: KernelDesc = tiled(
    "divergence",
    &[f("u", R), f("v", R), FACES[0], FACES[1], f("divergence", W)],
    None,
    Domain::Cells,
    "velocity divergence at cell centres (with obstacles, each face's flux weighted by its open fraction, \
     the solid's velocity through the rest)",
);
static JACOBI_DESC: KernelDesc = tiled(
    "jacobi",
    SWEEP_FACES,
    JACOBI_PARAMS,
    Domain::Cells,
    "one weighted-Jacobi sweep of the pressure Poisson equation (faces weighted by their open fraction)",
);
static JACOBI_MULTISWEEP_DESC: KernelDesc = KernelDesc {
    name: "jacobi_multisweep",
    module: "jacobi_multisweep",
    bindings: SWEEP,
    params: JACOBI_PARAMS,
    records: false,
    domain: Domain::Cells,
    workgroup: Workgroup::Covers(MULTISWEEP_TILE, MULTISWEEP_TILE),
    doc: "up to eight weighted-Jacobi sweeps in one dispatch (a tile and its halo in workgroup memory); \
          the arithmetic of as many `jacobi` dispatches",
};
static SOR_DESC: KernelDesc = tiled(
    "sor",
    SWEEP_FACES,
    JACOBI_PARAMS,
    Domain::Cells,
    "one colour pass of red-black SOR: the pass's colour relaxed, the other copied (ping-pong)",
);
static RELAX_DESC: KernelDesc = tiled(
    "relax",
    &[f("u", R), f("v", R), f("pressure", RW), f("u_out", W), f("v_out", W)],
    JACOBI_PARAMS,
    Domain::Faces,
    "a per-cell relaxation of the velocity, accumulating the equivalent pressure",
);
/// A multigrid kernel over a level (its extent given per dispatch).
const fn level(name: &'static str, bindings: &'static [Binding], doc: &'static str) -> KernelDesc {
    KernelDesc {
        name,
        module: name,
        bindings,
        params: MG,
        records: false,
        domain: Domain::Given,
        workgroup: Workgroup::Tiled,
        doc,
    }
}
static MG_LOAD_DESC: KernelDesc = level(
    "mg_load",
    &[f("pressure", RW), f("pressure_lo", RW), f("divergence", R), f("mg", RW), FACES[0], FACES[1]],
    "level 0 of the hierarchy from the fields: b and the iterate, or b as the double-float pressure's residual",
);
/// A level's face weights, an optional slot (absent without obstacles).
const MG_FACES_SLOT: Binding = f("mg_faces", R).optional();
static MG_SMOOTH_DESC: KernelDesc = level(
    "mg_smooth",
    &[f("mg", RW), MG_FACES_SLOT],
    "one red-black Gauss–Seidel colour pass on a level (ping-pong; the stencil weighted by the level's faces with obstacles)",
);
/// `mg_smooth2`'s bindings: the faces for its twin with obstacles.
const SMOOTH2_FIELDS: &[Binding] =
    &[f("mg", RW), f("pressure", RW), f("pressure_lo", RW), f("divergence", R), FACES[0], FACES[1], MG_FACES_SLOT];
static MG_SMOOTH2_DESC: KernelDesc = KernelDesc {
    workgroup: Workgroup::Covers(SMOOTH2_TILE, SMOOTH2_TILE),
    ..level(
        "mg_smooth2",
        SMOOTH2_FIELDS,
        "two red-black iterations on a level in one dispatch, with the restriction or the prolongation beside",
    )
};
static MG_SMOOTH2_SOLID_DESC: KernelDesc = KernelDesc {
    workgroup: Workgroup::Covers(SMOOTH2_TILE, SMOOTH2_TILE),
    ..level("mg_smooth2_solid", SMOOTH2_FIELDS, "mg_smooth2 with obstacles: the stencil weighted by the level's faces")
};
static MG_RESTRICT_DESC: KernelDesc = level(
    "mg_restrict",
    &[f("mg", RW), MG_FACES_SLOT],
    "a level's residual summed into the coarser level's b; its iterate zeroed",
);
static MG_WEIGHTS_DESC: KernelDesc = level(
    "mg_weights",
    &[Binding::vec2("u_faces", R), Binding::vec2("v_faces", R), f("mg_faces", W)],
    "a multigrid level's face weights with obstacles: level 0 from the grid's faces, a coarser one from the finer",
);
static MG_PROLONG_DESC: KernelDesc =
    level("mg_prolong", MG_ONLY, "the coarser level's correction interpolated into a level's iterate");
static MG_COARSE_DESC: KernelDesc = KernelDesc {
    workgroup: Workgroup::Covers(COARSE_THREADS, 1),
    ..level(
        "mg_coarse",
        &[f("mg", RW), MG_FACES_SLOT],
        "the rest of a V-cycle from a small level, in one workgroup (weighted by the levels' faces with obstacles)",
    )
};
static MG_STORE_DESC: KernelDesc = level(
    "mg_store",
    &[f("mg", R), f("pressure", RW), f("pressure_lo", RW)],
    "level 0's iterate into the pressure: copied, copied with its low part, or added in double-float",
);
static POISSON_TAPS_DESC: KernelDesc = KernelDesc {
    name: "poisson_taps",
    module: "poisson_taps",
    bindings: MG_ONLY,
    params: Some(ParamsDesc::of::<TapsParams>()),
    records: false,
    domain: Domain::Given,
    workgroup: Workgroup::Tiled,
    doc: "up to eight filter taps written into the workspace (setup)",
};
static POISSON_ROWS_DESC: KernelDesc = tiled(
    "poisson_rows",
    &[f("pressure", R), f("divergence", R), f("mg", RW)],
    FILTER,
    Domain::Cells,
    "the Poisson filter's row pass: rank 1D convolutions along x",
);
static POISSON_COLS_DESC: KernelDesc = tiled(
    "poisson_cols",
    &[f("mg", RW), f("pressure", W)],
    FILTER,
    Domain::Cells,
    "the Poisson filter's column pass: the rank convolutions along y, summed",
);
/// An MGPCG kernel (its extent given per dispatch).
const fn cg(name: &'static str, bindings: &'static [Binding], workgroup: Workgroup, doc: &'static str) -> KernelDesc {
    KernelDesc { name, module: name, bindings, params: CG, records: false, domain: Domain::Given, workgroup, doc }
}
static CG_INIT_DESC: KernelDesc = cg(
    "cg_init",
    &[f("pressure", R), f("pressure_lo", R), f("divergence", R), f("mg", RW), FACES[0], FACES[1]],
    Workgroup::Tiled,
    "x = the double-float pressure (or zero), r = b − A x",
);
static CG_DOT_DESC: KernelDesc =
    cg("cg_dot", MG_ONLY, Workgroup::Covers(256, 1), "a dot product's partial sums, or their sum into a scalar");
static CG_DIRECTION_DESC: KernelDesc = cg("cg_direction", MG_ONLY, Workgroup::Tiled, "d = z + β d");
static CG_APPLY_DESC: KernelDesc = cg("cg_apply", &[f("mg", RW), FACES[0], FACES[1]], Workgroup::Tiled, "q = A d");
static CG_UPDATE_DESC: KernelDesc = cg("cg_update", MG_ONLY, Workgroup::Tiled, "x += α d in double-float, r −= α q");
static SUBTRACT_GRADIENT_DESC: KernelDesc = tiled(
    "subtract_gradient",
    &[f("u", RW), f("v", RW), f("pressure", R), f("pressure_lo", R), FACES[0], FACES[1]],
    None,
    Domain::Faces,
    "u −= dt ∇p on every face (a face closed by an obstacle takes the solid's velocity)",
);
static RESIDUAL_DESC: KernelDesc = tiled(
    "residual",
    &[f("pressure", R), f("pressure_lo", R), f("divergence", R), f("residual", W), FACES[0], FACES[1]],
    None,
    Domain::Cells,
    "per-cell residual b − A p of the pressure equation",
);

/// Semi-Lagrangian advection of `u` and `v`.
pub const ADVECT_VELOCITY: Kernel = Kernel(&ADVECT_VELOCITY_DESC);
/// Semi-Lagrangian advection of the cell fields, channels on one lattice at a time.
pub const ADVECT_CHANNELS: Kernel = Kernel(&ADVECT_CHANNELS_DESC);
/// The backward pass of MacCormack and BFECC for the velocity.
pub const BACK_VELOCITY: Kernel = Kernel(&BACK_VELOCITY_DESC);
/// The backward pass of MacCormack and BFECC for a scalar and the dye.
pub const BACK_CELLS: Kernel = Kernel(&BACK_CELLS_DESC);
/// The sharper advection of the velocity.
pub const SHARP_VELOCITY: Kernel = Kernel(&SHARP_VELOCITY_DESC);
/// The sharper advection of a scalar and the dye.
pub const SHARP_CELLS: Kernel = Kernel(&SHARP_CELLS_DESC);
/// The curvature of the density's level sets.
pub const CURVATURE: Kernel = Kernel(&CURVATURE_DESC);
/// Surface tension on the faces.
pub const SURFACE_TENSION: Kernel = Kernel(&SURFACE_TENSION_DESC);
/// Combustion: fuel into heat, smoke and expansion.
pub const BURN: Kernel = Kernel(&BURN_DESC);
/// The combustion's expansion into the projection's right-hand side.
pub const EXPAND: Kernel = Kernel(&EXPAND_DESC);
/// The step's splats.
pub const SPLAT: Kernel = Kernel(&SPLAT_DESC);
/// Curl-noise turbulence.
pub const TURBULENCE: Kernel = Kernel(&TURBULENCE_DESC);
/// The step's splats on the channels `splat` does not take, a lattice at a time.
pub const SPLAT_CELLS: Kernel = Kernel(&SPLAT_CELLS_DESC);
/// The finer density's mean over each velocity cell.
pub const COARSE_DENSITY: Kernel = Kernel(&COARSE_DENSITY_DESC);
/// Combustion's soot carried to the finer density.
pub const FINE_SOOT: Kernel = Kernel(&FINE_SOOT_DESC);
/// Vorticity at cell centres.
pub const CURL: Kernel = Kernel(&CURL_DESC);
/// Forces on the faces.
pub const APPLY_FORCES: Kernel = Kernel(&APPLY_FORCES_DESC);
/// The max-speed limit on the faces.
pub const CLAMP_SPEED: Kernel = Kernel(&CLAMP_SPEED_DESC);
/// A sweep of implicit viscosity.
pub const DIFFUSE_VELOCITY: Kernel = Kernel(&DIFFUSE_VELOCITY_DESC);
/// The obstacles rasterised onto the faces and cells.
pub const RASTERISE_SOLIDS: Kernel = Kernel(&RASTERISE_SOLIDS_DESC);
/// Heat diffusion: one sweep.
pub const DIFFUSE_TEMPERATURE: Kernel = Kernel(&DIFFUSE_TEMPERATURE_DESC);
/// The cells of obstacles held at a temperature.
pub const HOLD_HEAT: Kernel = Kernel(&HOLD_HEAT_DESC);
/// Velocity divergence.
pub const DIVERGENCE: Kernel = Kernel(&DIVERGENCE_DESC);
/// A weighted-Jacobi pressure sweep.
pub const JACOBI: Kernel = Kernel(&JACOBI_DESC);
/// Up to eight Jacobi sweeps per dispatch.
pub const JACOBI_MULTISWEEP: Kernel = Kernel(&JACOBI_MULTISWEEP_DESC);
/// A red-black SOR colour pass.
pub const SOR: Kernel = Kernel(&SOR_DESC);
/// The per-cell relaxation.
pub const RELAX: Kernel = Kernel(&RELAX_DESC);
/// Multigrid: level 0 from the fields.
pub const MG_LOAD: Kernel = Kernel(&MG_LOAD_DESC);
/// Multigrid: a smoothing colour pass.
pub const MG_SMOOTH: Kernel = Kernel(&MG_SMOOTH_DESC);
/// Multigrid: two smoothing iterations and a transfer.
pub const MG_SMOOTH2: Kernel = Kernel(&MG_SMOOTH2_DESC);
/// Multigrid: two smoothing iterations and a transfer, with obstacles.
pub const MG_SMOOTH2_SOLID: Kernel = Kernel(&MG_SMOOTH2_SOLID_DESC);
/// Multigrid: the levels' face weights.
pub const MG_WEIGHTS: Kernel = Kernel(&MG_WEIGHTS_DESC);
/// Multigrid: restriction.
pub const MG_RESTRICT: Kernel = Kernel(&MG_RESTRICT_DESC);
/// Multigrid: prolongation.
pub const MG_PROLONG: Kernel = Kernel(&MG_PROLONG_DESC);
/// Multigrid: the coarse levels in one workgroup.
pub const MG_COARSE: Kernel = Kernel(&MG_COARSE_DESC);
/// Multigrid: level 0 into the pressure.
pub const MG_STORE: Kernel = Kernel(&MG_STORE_DESC);
/// Poisson filter: taps.
pub const POISSON_TAPS: Kernel = Kernel(&POISSON_TAPS_DESC);
/// Poisson filter: rows.
pub const POISSON_ROWS: Kernel = Kernel(&POISSON_ROWS_DESC);
/// Poisson filter: columns.
pub const POISSON_COLS: Kernel = Kernel(&POISSON_COLS_DESC);
/// MGPCG: start.
pub const CG_INIT: Kernel = Kernel(&CG_INIT_DESC);
/// MGPCG: dot products.
pub const CG_DOT: Kernel = Kernel(&CG_DOT_DESC);
/// MGPCG: search direction.
pub const CG_DIRECTION: Kernel = Kernel(&CG_DIRECTION_DESC);
/// MGPCG: `A d`.
pub const CG_APPLY: Kernel = Kernel(&CG_APPLY_DESC);
/// MGPCG: the update.
pub const CG_UPDATE: Kernel = Kernel(&CG_UPDATE_DESC);
/// Gradient subtraction.
pub const SUBTRACT_GRADIENT: Kernel = Kernel(&SUBTRACT_GRADIENT_DESC);
/// The pressure equation's residual.
pub const RESIDUAL: Kernel = Kernel(&RESIDUAL_DESC);

/// Every kernel of the grid model.
pub const ALL: &[Kernel] = &[
    ADVECT_VELOCITY,
    ADVECT_CHANNELS,
    BACK_VELOCITY,
    BACK_CELLS,
    SHARP_VELOCITY,
    SHARP_CELLS,
    CURVATURE,
    SURFACE_TENSION,
    BURN,
    EXPAND,
    SPLAT,
    SPLAT_CELLS,
    COARSE_DENSITY,
    FINE_SOOT,
    CURL,
    APPLY_FORCES,
    TURBULENCE,
    CLAMP_SPEED,
    DIFFUSE_VELOCITY,
    RASTERISE_SOLIDS,
    HOLD_HEAT,
    DIFFUSE_TEMPERATURE,
    DIVERGENCE,
    JACOBI,
    JACOBI_MULTISWEEP,
    SOR,
    RELAX,
    MG_LOAD,
    MG_SMOOTH,
    MG_SMOOTH2,
    MG_SMOOTH2_SOLID,
    MG_RESTRICT,
    MG_WEIGHTS,
    MG_PROLONG,
    MG_COARSE,
    MG_STORE,
    POISSON_TAPS,
    POISSON_ROWS,
    POISSON_COLS,
    CG_INIT,
    CG_DOT,
    CG_DIRECTION,
    CG_APPLY,
    CG_UPDATE,
    SUBTRACT_GRADIENT,
    RESIDUAL,
];
