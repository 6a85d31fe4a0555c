// #include multigrid
// One workgroup: the rest of a multigrid V-cycle from a small level (at most COARSE_CELLS
// cells) down to the coarsest and back up: the steps of fluid_core::multigrid::v_cycle in their
// order, each a loop of the workgroup's threads over the level's cells (the per-cell work of
// mg_smooth, mg_restrict and mg_prolong) ended by a barrier. On a GPU each of those steps as a
// dispatch costs a few microseconds of latency however few its cells; here they cost a barrier
// (twin of fluid-cpu/src/kernels/mg_coarse.rs).
//
// params: the first level (nx, ny, b; its p and tmp follow b), omega, colour = 1 for the
// symmetric cycle (the MGPCG preconditioner), zero_initial = 1 when the level starts from zero.
// The coarser levels are derived by the rule of fluid_core::multigrid::levels.

@group(0) @binding(2) var<uniform> params: MgParams;
@group(1) @binding(0) var<storage, read_write> mg: array<f32>;

const MC_THREADS: u32 = 256u;
// fluid_core::multigrid::{MIN_SIDE, MAX_COARSE_ITERATIONS}.
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

// Whether `levels` stops coarsening at a level of x x y cells.
fn last_level(x: u32, y: u32) -> bool {
    let m = min(x, y);
    return (m + 1u) / 2u < MC_MIN_SIDE || m < 2u * MC_MIN_SIDE - 1u;
}

// Level k below the first.
fn level_at(k: u32) -> CoarseLevel {
    var l = CoarseLevel(params.nx, params.ny, params.b);
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

// `iterations` red-black iterations on level l (black first when reversed), p -> tmp -> p;
// `from_zero`: the first pass takes the iterate as zero.
fn smooth_level(lid: u32, l: CoarseLevel, iterations: u32, reversed: bool, from_zero: bool) {
    let n = cells(l);
    let p = l.b + n;
    let tmp = l.b + 2u * n;
    for (var k = 0u; k < iterations; k++) {
        for (var half = 0u; half < 2u; half++) {
            let src = select(p, tmp, half == 1u);
            let dst = select(tmp, p, half == 1u);
            let colour = select(half, 1u - half, reversed);
            let zero = from_zero && k == 0u && half == 0u;
            for (var c = lid; c < n; c += MC_THREADS) {
                smooth_cell(l.nx, l.ny, l.b, src, dst, colour, zero, params.omega, c % l.nx, c / l.nx);
            }
            storageBarrier();
        }
    }
}

fn restrict_level(lid: u32, f: CoarseLevel, c: CoarseLevel) {
    let fp = f.b + cells(f);
    let cp = c.b + cells(c);
    for (var k = lid; k < cells(c); k += MC_THREADS) {
        restrict_cell(f.nx, f.ny, f.b, fp, c.nx, c.b, cp, k % c.nx, k / c.nx);
    }
    storageBarrier();
}

fn prolong_level(lid: u32, f: CoarseLevel, c: CoarseLevel) {
    let fp = f.b + cells(f);
    let cp = c.b + cells(c);
    for (var k = lid; k < cells(f); k += MC_THREADS) {
        prolong_cell(f.nx, fp, c.nx, c.ny, cp, k % f.nx, k / f.nx);
    }
    storageBarrier();
}

@compute @workgroup_size(256)
fn mg_coarse(@builtin(local_invocation_index) lid: u32) {
    let last = level_count() - 1u;
    let symmetric = params.colour != 0u;
    let from_zero = params.zero_initial != 0u;
    for (var l = 0u; l < last; l++) {
        smooth_level(lid, level_at(l), 2u, false, from_zero && l == 0u);
        restrict_level(lid, level_at(l), level_at(l + 1u));
    }
    let coarsest = level_at(last);
    let iterations = clamp(2u * max(coarsest.nx, coarsest.ny), 8u, MC_MAX_COARSE_ITERATIONS);
    smooth_level(lid, coarsest, iterations, false, from_zero && last == 0u);
    if (symmetric) {
        smooth_level(lid, coarsest, iterations, true, false);
    }
    for (var l = last; l > 0u; l--) {
        prolong_level(lid, level_at(l - 1u), level_at(l));
        smooth_level(lid, level_at(l - 1u), 2u, symmetric, false);
    }
}
