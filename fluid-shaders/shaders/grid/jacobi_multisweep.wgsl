// #include tile
// One workgroup: `params.sweeps` (1 ..= MS_HALO) weighted-Jacobi sweeps on an MS_TILE² tile,
// fused through workgroup memory (temporal blocking). The workgroup loads pressure on the tile
// plus a halo of MS_HALO cells (wrapped on periodic axes, zero past a wall): a square region of
// MS_SIDE² cells. Every sweep relaxes every cell off the region's edge; a cell's value after s
// sweeps depends only on cells up to s away, so after s sweeps every cell at least s cells
// inside the edge, and thus the tile, holds exactly what s `jacobi` dispatches give, with one
// read and one write of pressure instead of s of each.
//
// Thread t owns a vertical strip of MS_ROWS cells: column t % MS_SIDE, rows MS_ROWS (t / MS_SIDE)
// onwards, and keeps in registers each cell's iterate, its source term b = -h^2 div / dt and
// 1 / (neighbours inside the domain). The cells above and below come from its own registers
// (except at the strip's ends), the cells left and right from the region in workgroup memory,
// which a warp reads at consecutive addresses. Cells past a wall hold zero and stay zero, so a
// cell beside a wall sums its four neighbours in the CPU's order (left, right, down, up) with
// exact zeros for the missing ones: the same sum as `neighbours` in shared/pressure.wgsl.
//
// The rows are visited by one call each with a constant index rather than by a loop: naga
// guards every loop with an iteration counter, which keeps drivers from unrolling it, and a
// per-thread array indexed inside a loop that is not unrolled lives in (slow) local memory.

@group(0) @binding(2) var<uniform> params: JacobiParams;
@group(1) @binding(0) var<storage, read> pressure: array<f32>;
@group(1) @binding(1) var<storage, read> divergence: array<f32>;
@group(1) @binding(2) var<storage, read_write> pressure_out: array<f32>;

const MS_TILE: u32 = 48u;
const MS_HALO: u32 = 8u;
const MS_SIDE: u32 = 64u; // MS_TILE + 2 MS_HALO
const MS_THREADS: u32 = 256u;
const MS_ROWS: u32 = 16u; // MS_SIDE^2 / MS_THREADS

var<workgroup> region: array<f32, 4096>; // MS_SIDE^2

var<private> cur: array<f32, MS_ROWS>;
var<private> src: array<f32, MS_ROWS>;
var<private> inv: array<f32, MS_ROWS>;
// This thread's column and first row in the region, the region's origin in the grid; the
// column's grid index (wrapped on a periodic axis), whether it lies in the grid, and how many
// neighbours in x its cells have; b / div; and the value before this sweep of the row relaxed
// last.
var<private> col: u32;
var<private> row0: u32;
var<private> origin: vec2<i32>;
var<private> gx: i32;
var<private> col_in: bool;
var<private> col_count: f32;
var<private> scale: f32;
var<private> last_old: f32;

// Load row r: its pressure (into registers and the region), source term and 1 / neighbours.
fn fetch(r: u32) {
    let y = row0 + r;
    let ny = i32(grid.ny);
    var gy = origin.y + i32(y);
    if (py()) {
        gy = wrap(gy, ny);
    }
    var p = 0.0;
    var b = 0.0;
    var w = 0.0;
    if (col_in && gy >= 0 && gy < ny) {
        let c = ci(u32(gx), u32(gy));
        if (params.zero_initial == 0u) {
            p = pressure[c];
        }
        b = scale * divergence[c];
        // 1 .. 4 neighbours (the 1 x 1 walled grid, with none, is handled before): 1 / count,
        // with 1/3 the correctly rounded constant.
        let count = col_count + axis_count(gy, ny, py());
        w = select(select(select(1.0, 0.5, count == 2.0), 1.0 / 3.0, count == 3.0), 0.25, count == 4.0);
    }
    // Past a wall: b and inv stay 0, so the cell stays zero.
    cur[r] = p;
    src[r] = b;
    inv[r] = w;
    region[y * MS_SIDE + col] = p;
}

// One sweep at row r, into cur[r]; the rows above and below are this sweep's inputs, read from
// registers (`last_old`: row r - 1 before this sweep) or, at the strip's ends, from the region.
// Every cell is relaxed on every sweep but those of the region's first and last rows (cells
// nearer the edge than the sweep count hold stale values, which never reach the tile); cells
// past a wall have b = 0 and inv = 0 and start at zero, so they stay zero.
fn relax(r: u32) {
    let old = cur[r];
    let below = last_old;
    last_old = old;
    let y = row0 + r;
    // The region's first and last rows have no row beyond; its first and last columns read the
    // row before's last and the row after's first cell as neighbours: stale, never used.
    if ((r == 0u && y == 0u) || (r + 1u == MS_ROWS && y + 1u == MS_SIDE)) {
        return;
    }
    let k = y * MS_SIDE + col;
    var down: f32;
    var up: f32;
    if (r == 0u) {
        down = region[k - MS_SIDE];
    } else {
        down = below;
    }
    if (r + 1u == MS_ROWS) {
        up = region[k + MS_SIDE];
    } else {
        up = cur[r + 1u];
    }
    let sum = region[k - 1u] + region[k + 1u] + down + up;
    let pj = (sum + src[r]) * inv[r];
    cur[r] = old + params.omega * (pj - old);
}

// Publish row r to the region.
fn publish(r: u32) {
    region[(row0 + r) * MS_SIDE + col] = cur[r];
}

// Write row r when its cell lies in the tile and the grid.
fn emit(r: u32) {
    let local = vec2<u32>(col, row0 + r);
    let g = origin + vec2<i32>(local);
    let in_tile = all(local >= vec2<u32>(MS_HALO)) && all(local < vec2<u32>(MS_HALO + MS_TILE));
    if (in_tile && g.x < i32(grid.nx) && g.y < i32(grid.ny)) {
        pressure_out[ci(u32(g.x), u32(g.y))] = cur[r];
    }
}

@compute @workgroup_size(256)
fn jacobi_multisweep(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    origin = vec2<i32>(i32(wg.x * MS_TILE), i32(wg.y * MS_TILE)) - vec2<i32>(i32(MS_HALO));
    col = lid % MS_SIDE;
    row0 = lid / MS_SIDE * MS_ROWS;
    let nx = i32(grid.nx);
    gx = origin.x + i32(col);
    if (px()) {
        gx = wrap(gx, nx);
    }
    col_in = gx >= 0 && gx < nx;
    col_count = axis_count(gx, nx, px());
    scale = -grid.h * grid.h / inputs.dt;
    // A 1 x 1 grid with walls: its cell has no neighbour and keeps its value (zero when cold),
    // as in `jacobi`; the sweeps below assume every cell in the domain has one.
    if (grid.nx == 1u && grid.ny == 1u && !px() && !py()) {
        if (lid == 0u) {
            pressure_out[0] = select(pressure[0], 0.0, params.zero_initial != 0u);
        }
        return;
    }
    fetch(0u); fetch(1u); fetch(2u); fetch(3u);
    fetch(4u); fetch(5u); fetch(6u); fetch(7u);
    fetch(8u); fetch(9u); fetch(10u); fetch(11u);
    fetch(12u); fetch(13u); fetch(14u); fetch(15u);
    workgroupBarrier();
    let sweeps = clamp(params.sweeps, 1u, MS_HALO);
    for (var s = 1u; s <= sweeps; s++) {
        relax(0u); relax(1u); relax(2u); relax(3u);
        relax(4u); relax(5u); relax(6u); relax(7u);
        relax(8u); relax(9u); relax(10u); relax(11u);
        relax(12u); relax(13u); relax(14u); relax(15u);
        workgroupBarrier();
        publish(0u); publish(1u); publish(2u); publish(3u);
        publish(4u); publish(5u); publish(6u); publish(7u);
        publish(8u); publish(9u); publish(10u); publish(11u);
        publish(12u); publish(13u); publish(14u); publish(15u);
        workgroupBarrier();
    }
    emit(0u); emit(1u); emit(2u); emit(3u);
    emit(4u); emit(5u); emit(6u); emit(7u);
    emit(8u); emit(9u); emit(10u); emit(11u);
    emit(12u); emit(13u); emit(14u); emit(15u);
}
