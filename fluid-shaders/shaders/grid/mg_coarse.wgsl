// #include multigrid
// #include multigrid_solid
// One workgroup: the rest of a multigrid V-cycle from a small level down to the coarsest and
// back up: the steps of swirly_core::multigrid::v_cycle in their order, each a loop of the
// workgroup's threads over the level's cells (the per-cell work of mg_smooth, mg_restrict and
// mg_prolong) ended by a barrier. The levels' arrays (b, p, tmp of each, as packed in the
// buffer: at most MC_FLOATS values, swirly_core::multigrid::COARSE_FLOATS) live in workgroup
// memory meanwhile: the workgroup loads the first level's b and p, runs the cycle, and writes
// every array back. On a GPU each of those steps as a dispatch costs a few microseconds of
// latency however few its cells; here it costs a barrier (twin of
// fluid-cpu/src/kernels/mg_coarse.rs).
//
// params: the first level (nx, ny, b; its p and tmp follow b), omega, colour bit 0 for the
// symmetric cycle (the MGPCG preconditioner), bit 1 to over-relax the coarsest level (an open
// side), zero_initial = 1 when the level starts from zero. The coarser levels are derived by
// the rule of swirly_core::multigrid::levels. With obstacles every pass weighs the stencil by
// the levels' faces, read from mg_faces at the levels' places in the whole buffer.

@group(0) @binding(2) var<uniform> params: MgParams;
@group(1) @binding(0) var<storage, read_write> mg_buffer: array<f32>;
@group(1) @binding(1) var<storage, read> mg_faces: array<f32>;

// The levels in workgroup memory, at offsets relative to the first level's b. Named `mg` so
// that the per-cell functions of shared/multigrid.wgsl work on it.
const MC_FLOATS: u32 = 4096u;
var<workgroup> mg: array<f32, 4096>;

// The workgroup as 16 x 16 threads; thread (tx, ty) takes cells (tx + 16 a, ty + 16 b) of a
// level.
const MC_SIDE: u32 = 16u;
// swirly_core::multigrid::{MIN_SIDE, MAX_COARSE_ITERATIONS}.
const MC_MIN_SIDE: u32 = 3u;
const MC_MAX_COARSE_ITERATIONS: u32 = 64u;

struct CoarseLevel {
    nx: u32,
    ny: u32,
    b: u32,
}

fn cells(l: CoarseLevel) -> u32 {
    return l.nx * l.ny;
}

// Whether `levels` stops coarsening at a level of x x y cells: the next level's shorter side
// would fall below MC_MIN_SIDE.
fn last_level(x: u32, y: u32) -> bool {
    return (min(x, y) + 1u) / 2u < MC_MIN_SIDE;
}

// Level k below the first.
fn level_at(k: u32) -> CoarseLevel {
    var l = CoarseLevel(params.nx, params.ny, 0u);
    for (var n = 0u; n < k; n++) {
        l.b = l.b + 3u * cells(l);
        l.nx = (l.nx + 1u) / 2u;
        l.ny = (l.ny + 1u) / 2u;
    }
    return l;
}

// Number of levels from the first to the coarsest.
fn level_count() -> u32 {
    var x = params.nx;
    var y = params.ny;
    var n = 1u;
    while (!last_level(x, y)) {
        x = (x + 1u) / 2u;
        y = (y + 1u) / 2u;
        n += 1u;
    }
    return n;
}

// `iterations` red-black iterations on level l (black first when reversed); `from_zero`: the
// first pass takes the iterate as zero. The values of smooth_cell's p -> tmp -> p passes
// (mg_smooth). A periodic axis of odd length makes its first and last cells neighbours of one
// colour, and a pass must read the other's old value: such levels take those passes as they
// are. Otherwise a pass updates only its colour's cells, in place in p, and the workgroup's
// threads take those cells alone (at 32 x 32, two each instead of four cells of which a
// thread's colour made it either update or copy all); tmp is left as the two-array form leaves
// it, the state after the first half of the last iteration (the first half writes its cells
// there too; the second half saves each cell's value before updating it).
fn smooth_level(index: u32, t: vec2<u32>, l: CoarseLevel, iterations: u32, reversed: bool, from_zero: bool, omega: f32) {
    // With solids every cell takes the weighted stencil, in the passes' own form (its branch
    // kept out of the in-place loop, which the box without solids runs).
    if (grid.solids != 0u || (px() && (l.nx & 1u) == 1u) || (py() && (l.ny & 1u) == 1u)) {
        smooth_level_copying(t, l, iterations, reversed, from_zero, omega);
        return;
    }
    let n = cells(l);
    let p = l.b + n;
    let tmp = l.b + 2u * n;
    // Cells of one colour per row, at most: columns 2m + (j + colour) % 2.
    let half_row = (l.nx + 1u) / 2u;
    for (var k = 0u; k < iterations; k++) {
        for (var half = 0u; half < 2u; half++) {
            let colour = select(half, 1u - half, reversed);
            let zero = from_zero && k == 0u && half == 0u;
            for (var q = index; q < half_row * l.ny; q += MC_SIDE * MC_SIDE) {
                let j = q / half_row;
                let i = 2u * (q % half_row) + ((j + colour) & 1u);
                if (i < l.nx) {
                    let c = j * l.nx + i;
                    let old = select(mg[p + c], 0.0, zero);
                    var nb = level_neighbours(p, l.nx, l.ny, i, j);
                    if (zero) {
                        nb.sum = 0.0;
                    }
                    if (half == 1u) {
                        mg[tmp + c] = old;
                    }
                    let v = relaxed(old, nb, mg[l.b + c], omega);
                    mg[p + c] = v;
                    if (half == 0u) {
                        mg[tmp + c] = v;
                    }
                }
            }
            if (zero) {
                // The other colour's iterate is zero too (the two-array form copies the zero).
                workgroupBarrier();
                for (var q = index; q < half_row * l.ny; q += MC_SIDE * MC_SIDE) {
                    let j = q / half_row;
                    let i = 2u * (q % half_row) + ((j + colour + 1u) & 1u);
                    if (i < l.nx) {
                        mg[p + j * l.nx + i] = 0.0;
                    }
                }
            }
            workgroupBarrier();
        }
    }
}

// smooth_level as the passes of mg_smooth: every cell of the level, p -> tmp -> p.
fn smooth_level_copying(t: vec2<u32>, l: CoarseLevel, iterations: u32, reversed: bool, from_zero: bool, omega: f32) {
    let n = cells(l);
    let w = faces_at(params.b + l.b);
    let p = l.b + n;
    let tmp = l.b + 2u * n;
    for (var k = 0u; k < iterations; k++) {
        for (var half = 0u; half < 2u; half++) {
            let src = select(p, tmp, half == 1u);
            let dst = select(tmp, p, half == 1u);
            let colour = select(half, 1u - half, reversed);
            let zero = from_zero && k == 0u && half == 0u;
            for (var j = t.y; j < l.ny; j += MC_SIDE) {
                for (var i = t.x; i < l.nx; i += MC_SIDE) {
                    if (grid.solids != 0u) {
                        weighted_smooth_cell(l.nx, l.ny, l.b, w, src, dst, colour, zero, omega, i, j);
                    } else {
                        smooth_cell(l.nx, l.ny, l.b, src, dst, colour, zero, omega, i, j);
                    }
                }
            }
            workgroupBarrier();
        }
    }
}

fn restrict_level(t: vec2<u32>, f: CoarseLevel, c: CoarseLevel) {
    let fp = f.b + cells(f);
    let cp = c.b + cells(c);
    let w = faces_at(params.b + f.b);
    for (var j = t.y; j < c.ny; j += MC_SIDE) {
        for (var i = t.x; i < c.nx; i += MC_SIDE) {
            if (grid.solids != 0u) {
                weighted_restrict_cell(f.nx, f.ny, f.b, w, fp, c.nx, c.b, cp, i, j);
            } else {
                restrict_cell(f.nx, f.ny, f.b, fp, c.nx, c.b, cp, i, j);
            }
        }
    }
    workgroupBarrier();
}

fn prolong_level(t: vec2<u32>, f: CoarseLevel, c: CoarseLevel) {
    let fp = f.b + cells(f);
    let cp = c.b + cells(c);
    for (var j = t.y; j < f.ny; j += MC_SIDE) {
        for (var i = t.x; i < f.nx; i += MC_SIDE) {
            prolong_cell(f.nx, fp, c.nx, c.ny, cp, i, j);
        }
    }
    workgroupBarrier();
}

@compute @workgroup_size(16, 16)
fn mg_coarse(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(local_invocation_index) index: u32) {
    let t = lid.xy;
    let last = level_count() - 1u;
    let end = level_at(last).b + 3u * cells(level_at(last));
    // The first level's b and p (tmp is written before it is read; so are the coarser levels).
    let first = 2u * cells(level_at(0u));
    for (var k = index; k < first; k += MC_SIDE * MC_SIDE) {
        mg[k] = mg_buffer[params.b + k];
    }
    workgroupBarrier();
    let symmetric = (params.colour & 1u) != 0u;
    let from_zero = params.zero_initial != 0u;
    let omega = params.omega;
    for (var l = 0u; l < last; l++) {
        smooth_level(index, t, level_at(l), 2u, false, from_zero && l == 0u, omega);
        restrict_level(t, level_at(l), level_at(l + 1u));
    }
    let coarsest = level_at(last);
    let iterations = clamp(2u * max(coarsest.nx, coarsest.ny), 8u, MC_MAX_COARSE_ITERATIONS);
    // swirly_core::multigrid::coarsest_omega: an open side's quarter wave crosses in ~n.
    let n = f32(max(coarsest.nx, coarsest.ny));
    let over = 2.0 / (1.0 + sin(3.14159265358979 / (2.0 * n)));
    let coarse_omega = select(omega, over, (params.colour & 2u) != 0u);
    smooth_level(index, t, coarsest, iterations, false, from_zero && last == 0u, coarse_omega);
    if (symmetric) {
        smooth_level(index, t, coarsest, iterations, true, false, coarse_omega);
    }
    for (var l = last; l > 0u; l--) {
        prolong_level(t, level_at(l - 1u), level_at(l));
        smooth_level(index, t, level_at(l - 1u), 2u, symmetric, false, omega);
    }
    // Every array back (the barrier after the last step made them visible).
    for (var k = index; k < end; k += MC_SIDE * MC_SIDE) {
        mg_buffer[params.b + k] = mg[k];
    }
}
