//! The particle model's kernels: one descriptor each (WGSL under
//! `fluid-shaders/shaders/particles/`, CPU twins in `fluid-cpu/src/kernels/`). Every one runs
//! over a count in 1D workgroups of [`WORKGROUP`] threads, but `particle_draw`, which covers
//! the picture's cells.

use crate::particles::{
    CollideParams, DensityParams, DrawParams, EmitParams, HashParams, RelaxParams, ScanParams, SolidParams,
    SpringParams, ViscosityParams, WORKGROUP,
};
use swirly_ir::kernel::Access::{Read as R, ReadWrite as RW, Write as W};
use swirly_ir::kernel::{Binding, Domain, Kernel, KernelDesc, ParamsDesc, Workgroup};

const fn linear(name: &'static str, bindings: &'static [Binding], params: ParamsDesc, doc: &'static str) -> KernelDesc {
    KernelDesc {
        name,
        module: name,
        bindings,
        params: Some(params),
        records: false,
        domain: Domain::Given,
        workgroup: Workgroup::Covers(WORKGROUP, 1),
        doc,
    }
}

const HASH: ParamsDesc = ParamsDesc::of::<HashParams>();
const SCAN: ParamsDesc = ParamsDesc::of::<ScanParams>();

static HASH_DESC: KernelDesc = linear(
    "particle_hash",
    &[Binding::vec2("position", R), Binding::u32("keys", W), Binding::atomic("counts")],
    HASH,
    "one particle: its hash cell into keys, one more in its cell's count",
);
static SCAN_DESC: KernelDesc = linear(
    "particle_scan",
    &[Binding::u32("values", R), Binding::u32("scanned", W), Binding::u32("totals", W)],
    SCAN,
    "one thread of a block of 1024 values: their exclusive prefix sum, and the block's total",
);
static SCAN_ADD_DESC: KernelDesc = linear(
    "particle_scan_add",
    &[Binding::u32("scanned", RW), Binding::u32("totals", R)],
    SCAN,
    "one value: the scanned totals of the blocks before its own added",
);
static SCATTER_DESC: KernelDesc = linear(
    "particle_scatter",
    &[Binding::u32("keys", R), Binding::u32("starts", R), Binding::atomic("counts"), Binding::u32("order", W)],
    HASH,
    "one particle: a slot in its cell's run (counts back to zero)",
);
static ORDER_DESC: KernelDesc = linear(
    "particle_order",
    &[Binding::u32("starts", R), Binding::u32("order", RW)],
    HASH,
    "one hash cell: its run of particle indices sorted, which makes the sort stable",
);
static GATHER_DESC: KernelDesc = linear(
    "particle_gather",
    &[
        Binding::u32("order", R),
        Binding::vec2("position", R),
        Binding::vec2("velocity", R),
        Binding::u32("keys", R),
        Binding::vec2("position_out", W),
        Binding::vec2("velocity_out", W),
        Binding::u32("cell", W),
    ],
    HASH,
    "one slot: the particle sorted there, its position, velocity and cell",
);
static FORCES_DESC: KernelDesc = linear(
    "particle_forces",
    &[
        Binding::vec2("position", R),
        Binding::vec2("velocity", R),
        Binding::u32("cell", R),
        Binding::u32("starts", R),
        Binding::vec2("advanced", W),
    ],
    ParamsDesc::of::<ViscosityParams>(),
    "one particle: gravity and the viscosity impulses of approaching neighbours, then its advanced position",
);
static DENSITY_DESC: KernelDesc = linear(
    "particle_density",
    &[Binding::vec2("position", R), Binding::u32("cell", R), Binding::u32("starts", R), Binding::vec2("pressure", W)],
    ParamsDesc::of::<DensityParams>(),
    "one particle: density and near-density, its pressure and near-pressure",
);
static RELAX_DESC: KernelDesc = linear(
    "particle_relax",
    &[
        Binding::vec2("position", R),
        Binding::vec2("pressure", R),
        Binding::u32("cell", R),
        Binding::u32("starts", R),
        Binding::vec2("relaxed", W),
    ],
    ParamsDesc::of::<RelaxParams>(),
    "one particle: its double density relaxation displacement from every neighbour pair",
);
static COLLIDE_DESC: KernelDesc = linear(
    "particle_collide",
    &[Binding::vec2("position", RW), Binding::vec2("previous", R), Binding::vec2("velocity", W)],
    ParamsDesc::of::<CollideParams>(),
    "one particle: kept in its container, its velocity from its position change",
);
static IDS_DESC: KernelDesc = linear(
    "particle_ids",
    &[Binding::u32("order", R), Binding::u32("ids", R), Binding::u32("ids_out", W), Binding::u32("slots", W)],
    HASH,
    "one slot: the stable id of the particle sorted there, and that id's slot",
);
const SPRING: ParamsDesc = ParamsDesc::of::<SpringParams>();
static SPRING_PROPOSE_DESC: KernelDesc = linear(
    "particle_spring_propose",
    &[
        Binding::vec2("position", R),
        Binding::u32("cell", R),
        Binding::u32("starts", R),
        Binding::u32("ids", R),
        Binding::u32("slots", R),
        Binding::u32("springs", R),
        Binding::u32("proposals", W),
    ],
    SPRING,
    "one particle: its springs with their rest lengths yielded, those past h dropped, then new \
     springs to the neighbours within h it holds none with, while its list has room",
);
static SPRING_CONFIRM_DESC: KernelDesc = linear(
    "particle_spring_confirm",
    &[Binding::u32("proposals", R), Binding::u32("springs", W)],
    SPRING,
    "one particle id: the proposed springs whose partner proposed it too, so every spring is held by both",
);
static SPRING_APPLY_DESC: KernelDesc = linear(
    "particle_spring_apply",
    &[
        Binding::vec2("position", R),
        Binding::u32("ids", R),
        Binding::u32("slots", R),
        Binding::u32("springs", R),
        Binding::vec2("moved", W),
    ],
    SPRING,
    "one particle: its half of each of its springs' displacements",
);
static SOLIDS_DESC: KernelDesc = linear(
    "particle_solids",
    &[Binding::vec4("obstacles", R), Binding::vec2("position", RW), Binding::vec2("velocity", RW)],
    ParamsDesc::of::<SolidParams>(),
    "one particle: put out of any obstacle onto its outline, its velocity relative to the solid's \
     without the inward part and with friction, pulled toward a solid within reach of stickiness",
);
static EMIT_DESC: KernelDesc = linear(
    "particle_emit",
    &[Binding::vec2("position", RW), Binding::vec2("velocity", RW), Binding::u32("ids", RW)],
    ParamsDesc::of::<EmitParams>(),
    "one new particle of an emitter: its place in its row, upstream by how late in the step it leaves",
);
static POINTER_DESC: KernelDesc = KernelDesc {
    records: true,
    ..linear(
        "particle_pointer",
        &[Binding::vec2("position", R), Binding::vec2("velocity", RW)],
        HASH,
        "one particle: the step's splats as a pointer, their velocity and pull toward their centre",
    )
};
static DRAW_DESC: KernelDesc = KernelDesc {
    name: "particle_draw",
    module: "particle_draw",
    bindings: &[
        Binding::vec2("position", R),
        Binding::u32("order", R),
        Binding::u32("starts", R),
        Binding::f32("density", W),
    ],
    params: Some(ParamsDesc::of::<DrawParams>()),
    records: false,
    domain: Domain::Cells,
    workgroup: Workgroup::Tiled,
    doc: "one picture cell: the liquid's smoothed density at its centre",
};

/// `particle_hash`.
pub const PARTICLE_HASH: Kernel = Kernel(&HASH_DESC);
/// `particle_scan`.
pub const PARTICLE_SCAN: Kernel = Kernel(&SCAN_DESC);
/// `particle_scan_add`.
pub const PARTICLE_SCAN_ADD: Kernel = Kernel(&SCAN_ADD_DESC);
/// `particle_scatter`.
pub const PARTICLE_SCATTER: Kernel = Kernel(&SCATTER_DESC);
/// `particle_order`.
pub const PARTICLE_ORDER: Kernel = Kernel(&ORDER_DESC);
/// `particle_gather`.
pub const PARTICLE_GATHER: Kernel = Kernel(&GATHER_DESC);
/// `particle_forces`.
pub const PARTICLE_FORCES: Kernel = Kernel(&FORCES_DESC);
/// `particle_density`.
pub const PARTICLE_DENSITY: Kernel = Kernel(&DENSITY_DESC);
/// `particle_relax`.
pub const PARTICLE_RELAX: Kernel = Kernel(&RELAX_DESC);
/// `particle_collide`.
pub const PARTICLE_COLLIDE: Kernel = Kernel(&COLLIDE_DESC);
/// `particle_draw`.
pub const PARTICLE_DRAW: Kernel = Kernel(&DRAW_DESC);
/// `particle_ids`.
pub const PARTICLE_IDS: Kernel = Kernel(&IDS_DESC);
/// `particle_spring_propose`.
pub const PARTICLE_SPRING_PROPOSE: Kernel = Kernel(&SPRING_PROPOSE_DESC);
/// `particle_spring_confirm`.
pub const PARTICLE_SPRING_CONFIRM: Kernel = Kernel(&SPRING_CONFIRM_DESC);
/// `particle_spring_apply`.
pub const PARTICLE_SPRING_APPLY: Kernel = Kernel(&SPRING_APPLY_DESC);
/// `particle_solids`.
pub const PARTICLE_SOLIDS: Kernel = Kernel(&SOLIDS_DESC);
/// `particle_pointer`.
pub const PARTICLE_POINTER: Kernel = Kernel(&POINTER_DESC);
/// `particle_emit`.
pub const PARTICLE_EMIT: Kernel = Kernel(&EMIT_DESC);

/// Every kernel of the particle model.
pub const ALL: &[Kernel] = &[
    PARTICLE_HASH,
    PARTICLE_SCAN,
    PARTICLE_SCAN_ADD,
    PARTICLE_SCATTER,
    PARTICLE_ORDER,
    PARTICLE_GATHER,
    PARTICLE_FORCES,
    PARTICLE_DENSITY,
    PARTICLE_RELAX,
    PARTICLE_COLLIDE,
    PARTICLE_DRAW,
    PARTICLE_IDS,
    PARTICLE_SPRING_PROPOSE,
    PARTICLE_SPRING_CONFIRM,
    PARTICLE_SPRING_APPLY,
    PARTICLE_SOLIDS,
    PARTICLE_POINTER,
    PARTICLE_EMIT,
];
