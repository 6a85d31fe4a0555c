// One invocation: TWO weighted-Jacobi sweeps at cell (i, j), fused through workgroup memory
// (temporal blocking). The workgroup loads pressure on its tile plus a halo of 2, computes the
// first sweep on the tile plus a halo of 1, then the second sweep on the tile: the arithmetic of
// two `jacobi` dispatches, cell for cell, with one read and one write of pressure instead of two.

@group(0) @binding(2) var<uniform> params: JacobiParams;
@group(1) @binding(0) var<storage, read> pressure: array<f32>;
@group(1) @binding(1) var<storage, read> divergence: array<f32>;
@group(1) @binding(2) var<storage, read_write> pressure_out: array<f32>;

const P0_W: u32 = WG_X + 4u;
const P1_W: u32 = WG_X + 2u;
var<workgroup> p0: array<f32, (WG_X + 4u) * (WG_Y + 4u)>;
var<workgroup> p1: array<f32, (WG_X + 2u) * (WG_Y + 2u)>;

// Wrap a coordinate onto a periodic axis of n cells (tiles reach at most 2 cells past an
// edge; only axes shorter than that need the modulo).
fn wrap(x: i32, n: i32) -> i32 {
    if (n < 4) {
        return ((x % n) + n) % n;
    }
    return select(select(x, x - n, x >= n), x + n, x < 0);
}

// Global cell of a tile-local coordinate offset by `halo`, wrapped on periodic axes;
// (-1, -1) outside the domain (past a wall).
fn global_cell(origin: vec2<i32>, local: vec2<u32>, halo: i32) -> vec2<i32> {
    var g = origin + vec2<i32>(local) - vec2<i32>(halo);
    let n = vec2<i32>(i32(grid.nx), i32(grid.ny));
    if (px()) {
        g.x = wrap(g.x, n.x);
    }
    if (py()) {
        g.y = wrap(g.y, n.y);
    }
    if (g.x < 0 || g.y < 0 || g.x >= n.x || g.y >= n.y) {
        return vec2<i32>(-1);
    }
    return g;
}

// One sweep at global cell c whose neighbours sit around `at` (its index in a shared array of
// row width w). Same order and exclusions as `neighbours` in shared/pressure.wgsl; `inner`:
// the whole tile and halo lie inside the domain, so every neighbour exists.
fn sweep(c: vec2<u32>, at: u32, w: u32, first: bool, inner: bool) -> f32 {
    var sum = 0.0;
    var n = 0.0;
    var centre: f32;
    if (inner) {
        n = 4.0;
        if (first) {
            sum = p0[at - 1u] + p0[at + 1u] + p0[at - w] + p0[at + w];
            centre = p0[at];
        } else {
            sum = p1[at - 1u] + p1[at + 1u] + p1[at - w] + p1[at + w];
            centre = p1[at];
        }
    } else {
        let has_l = prev(c.x, grid.nx, px()) != NONE;
        let has_r = next(c.x, grid.nx, px()) != NONE;
        let has_d = prev(c.y, grid.ny, py()) != NONE;
        let has_u = next(c.y, grid.ny, py()) != NONE;
        if (first) {
            if (has_l) { sum += p0[at - 1u]; n += 1.0; }
            if (has_r) { sum += p0[at + 1u]; n += 1.0; }
            if (has_d) { sum += p0[at - w]; n += 1.0; }
            if (has_u) { sum += p0[at + w]; n += 1.0; }
            centre = p0[at];
        } else {
            if (has_l) { sum += p1[at - 1u]; n += 1.0; }
            if (has_r) { sum += p1[at + 1u]; n += 1.0; }
            if (has_d) { sum += p1[at - w]; n += 1.0; }
            if (has_u) { sum += p1[at + w]; n += 1.0; }
            centre = p1[at];
        }
    }
    let scale = -grid.h * grid.h / inputs.dt;
    let d = divergence[ci(c.x, c.y)];
    if (first && params.zero_initial != 0u) {
        return select(params.omega * scale * d / n, 0.0, n == 0.0);
    }
    if (n == 0.0) {
        return centre;
    }
    let pj = (sum + scale * d) / n;
    return centre + params.omega * (pj - centre);
}

@compute @workgroup_size(WG_X, WG_Y)
fn jacobi_multisweep(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let origin = vec2<i32>(i32(wg.x * WG_X), i32(wg.y * WG_Y));
    let threads = WG_X * WG_Y;
    // The halo of 2 stays inside the domain (one more cell on the low side: every cell of the
    // first sweep then has all four neighbours): the uniform fast path.
    let inner = origin.x >= 3 && origin.y >= 3 && origin.x + i32(WG_X) + 3 <= i32(grid.nx)
        && origin.y + i32(WG_Y) + 3 <= i32(grid.ny);
    // Load pressure on the tile plus a halo of 2, row by row (coalesced); zero outside the
    // domain, where it is never used.
    for (var k = lid; k < P0_W * (WG_Y + 4u); k += threads) {
        let local = vec2<u32>(k % P0_W, k / P0_W);
        let g = global_cell(origin, local, 2);
        var val = 0.0;
        if (g.x >= 0 && params.zero_initial == 0u) {
            val = pressure[ci(u32(g.x), u32(g.y))];
        }
        p0[k] = val;
    }
    workgroupBarrier();
    // First sweep on the tile plus a halo of 1.
    for (var k = lid; k < P1_W * (WG_Y + 2u); k += threads) {
        let local = vec2<u32>(k % P1_W, k / P1_W);
        let g = global_cell(origin, local, 1);
        var val = 0.0;
        if (g.x >= 0) {
            val = sweep(vec2<u32>(g), (local.y + 1u) * P0_W + local.x + 1u, P0_W, true, inner);
        }
        p1[k] = val;
    }
    workgroupBarrier();
    // Second sweep on the tile.
    let t = vec2<u32>(lid % WG_X, lid / WG_X);
    let i = origin.x + i32(t.x);
    let j = origin.y + i32(t.y);
    if (i < i32(grid.nx) && j < i32(grid.ny)) {
        let g = global_cell(origin, t, 0);
        pressure_out[ci(u32(i), u32(j))] = sweep(vec2<u32>(g), (t.y + 1u) * P1_W + t.x + 1u, P1_W, false, inner);
    }
}
