// Shared by mg_smooth2 and mg_smooth2_solid (after the multigrid, tile, double_float,
// pressure_df, pressure_df_solid and multigrid_solid snippets). One workgroup: two red-black
// Gauss-Seidel iterations (four colour passes, over-relaxed by omega) on an S2_TILE² tile of one multigrid level, from the iterate at `p` (plus, when
// cnx > 0 and no restriction is asked for, the next coarser level's correction, as mg_prolong
// adds it) into `tmp`; `p` is only read (neighbouring workgroups read it for their halos). With
// the S2_RESTRICT bit of `colour`, the residual of the result is then summed into the coarser
// level's b over each coarse cell's children, and its p zeroed, as mg_restrict does (the tile
// is even, so it holds whole coarse cells). The workgroup loads the iterate and b on the tile
// plus a halo of five cells (wrapped on periodic axes, zero past a wall) and runs the passes
// there: after pass s every cell at least s cells inside the region's edge is exact, so after
// four passes the tile and a ring around it hold what four `mg_smooth` dispatches give, which
// the residual of the tile's cells needs (twin of fluid-cpu/src/kernels/mg_smooth2.rs).
//
// Thread t owns a vertical strip of S2_ROWS cells of the S2_SIDE² region: column t % S2_SIDE,
// rows S2_ROWS (t / S2_SIDE) onwards; it keeps each cell's iterate, b, neighbour count and
// colour in registers. A pass computes the new values of its colour's cells from the region
// (the cells above and below within the strip from registers), then, after a barrier, writes
// them to the region: every cell reads its neighbours' values from before the pass, as the
// ping-pong passes of `mg_smooth` do. Cells past a wall hold zero and are never updated, so
// the neighbour sums are those of `level_neighbours` (left, right, down, up, zeros for the
// missing ones). Rows are visited by calls with constant indices (see jacobi_multisweep.wgsl).
// With the S2_ACCUMULATE bit (level 0's post-smoothing in a double-float solve) each result is
// also added to the double-float pressure, as mg_store in mode STORE_ADD does; with the
// S2_LOAD_RESIDUAL bit (level 0's pre-smoothing) b is first computed from the double-float
// pressure and the divergence, as mg_load in mode LOAD_RESIDUAL does, and written for the
// tile's cells (the post-smoothing reads it).
//
// mg_smooth2_solid (S2_WEIGHTED) is the kernel with obstacles: each cell's four neighbours are
// weighted by the level's faces (mg_faces), read once per cell by `fetch` into registers, and
// its neighbour count is their sum, with level_edge_weight past the box's edge: the passes,
// the residual and the restriction are those of weighted_smooth_cell and
// weighted_restrict_cell, and level 0's b from the pressure is weighted by the grid's faces,
// as mg_load's is. A constant, not a test of grid.solids: the registers the weights take would
// slow the plain kernel.

@group(0) @binding(2) var<uniform> params: MgParams;
@group(1) @binding(0) var<storage, read_write> mg: array<f32>;
@group(1) @binding(1) var<storage, read_write> pressure: array<f32>;
@group(1) @binding(2) var<storage, read_write> pressure_lo: array<f32>;
@group(1) @binding(3) var<storage, read> divergence: array<f32>;
@group(1) @binding(4) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(5) var<storage, read> v_faces: array<vec2<f32>>;
@group(1) @binding(6) var<storage, read> mg_faces: array<f32>;

const S2_TILE: u32 = 22u;
const S2_HALO: u32 = 5u;
const S2_SIDE: u32 = 32u; // S2_TILE + 2 S2_HALO
const S2_ROWS: u32 = 4u; // S2_SIDE^2 / 256

var<workgroup> region: array<f32, 1024>; // S2_SIDE^2
var<workgroup> resid: array<f32, 1024>; // S2_SIDE^2
// The bit of params.colour that asks for the restriction (swirly_core::multigrid::SMOOTH2_RESTRICT).
const S2_RESTRICT: u32 = 2u;
// The bit that asks for the result to be added to the pressure (SMOOTH2_ACCUMULATE).
const S2_ACCUMULATE: u32 = 4u;
// The bit that asks for b to be computed from the pressure (SMOOTH2_LOAD_RESIDUAL).
const S2_LOAD_RESIDUAL: u32 = 8u;

var<private> cur: array<f32, S2_ROWS>;
var<private> bval: array<f32, S2_ROWS>;
var<private> count: array<f32, S2_ROWS>;
var<private> parity: array<u32, S2_ROWS>;
// With S2_WEIGHTED: each cell's neighbour weights (left, right, down, up).
var<private> weight: array<vec4<f32>, S2_ROWS>;
// This thread's column and first row, the region's origin on the level, the column's level
// index (wrapped on a periodic axis), whether it lies on the level, its neighbours in x, and
// whether it is on the region's edge.
var<private> col: u32;
var<private> row0: u32;
var<private> origin: vec2<i32>;
var<private> gx: i32;
var<private> col_in: bool;
var<private> col_count: f32;
var<private> edge_col: bool;
// The iterate before this pass of the row relaxed last, and the new values of this pass.
var<private> last_old: f32;
var<private> next_val: array<f32, S2_ROWS>;

// The weights of the faces of cell (i, j) of the level, left, right, down, up (the order of
// weighted_level_neighbours); past the box's edge the side's level_edge_weight (the value
// there is zero in the region, so only the count takes it).
fn face_weights(i: u32, j: u32) -> vec4<f32> {
    let w = faces_at(params.b);
    let nx = params.nx;
    let top = w + nx * params.ny;
    let c = j * nx + i;
    var r = vec4<f32>(level_edge_weight(LEFT, nx, grid.nx), level_edge_weight(RIGHT, nx, grid.nx),
        level_edge_weight(BOTTOM, params.ny, grid.ny), level_edge_weight(TOP, params.ny, grid.ny));
    let il = prev(i, nx, px());
    if (il != NONE) {
        r.x = mg_faces[w + j * nx + u32(il)];
    }
    if (next(i, nx, px()) != NONE) {
        r.y = mg_faces[w + c];
    }
    let jd = prev(j, params.ny, py());
    if (jd != NONE) {
        r.z = mg_faces[top + u32(jd) * nx + i];
    }
    if (next(j, params.ny, py()) != NONE) {
        r.w = mg_faces[top + c];
    }
    return r;
}

// Load row r of the strip: the iterate (zero when taken as zero), b, neighbour count, colour.
fn fetch(r: u32) {
    let y = row0 + r;
    let ny = i32(params.ny);
    var gy = origin.y + i32(y);
    if (py()) {
        gy = wrap(gy, ny);
    }
    var p = 0.0;
    var b = 0.0;
    var n = 0.0;
    var colour = 0u;
    if (col_in && gy >= 0 && gy < ny) {
        let c = u32(gy) * params.nx + u32(gx);
        if (params.zero_initial == 0u) {
            p = mg[params.p + c];
            if (params.cnx > 0u && (params.colour & S2_RESTRICT) == 0u) {
                p = p + prolong_correction(params.cnx, params.cny, params.cp, u32(gx), u32(gy));
            }
        }
        if ((params.colour & S2_LOAD_RESIDUAL) != 0u) {
            var d: f32;
            if (S2_WEIGHTED) {
                d = weighted_df_differences(u32(gx), u32(gy));
            } else {
                d = df_differences(u32(gx), u32(gy));
            }
            b = -grid.h * grid.h / inputs.dt * divergence[c] + d;
            let in_tile = col >= S2_HALO && col < S2_HALO + S2_TILE && y >= S2_HALO && y < S2_HALO + S2_TILE;
            if (in_tile) {
                mg[params.b + c] = b;
            }
        } else {
            b = mg[params.b + c];
        }
        colour = (u32(gx) + u32(gy)) & 1u;
        if (S2_WEIGHTED) {
            let wt = face_weights(u32(gx), u32(gy));
            weight[r] = wt;
            n = wt.x + wt.y + wt.z + wt.w;
        } else {
            n = col_count + axis_count(gy, ny, py());
        }
    }
    cur[r] = p;
    bval[r] = b;
    count[r] = n;
    parity[r] = colour;
    region[y * S2_SIDE + col] = p;
}

// Pass of `colour` at row r, into next_val[r].
fn relax(r: u32, colour: u32) {
    let old = cur[r];
    let below = last_old;
    last_old = old;
    next_val[r] = old;
    let y = row0 + r;
    if (edge_col || (r == 0u && y == 0u) || (r + 1u == S2_ROWS && y + 1u == S2_SIDE)) {
        return;
    }
    if (parity[r] != colour || count[r] == 0.0) {
        return;
    }
    let k = y * S2_SIDE + col;
    var down: f32;
    var up: f32;
    if (r == 0u) {
        down = region[k - S2_SIDE];
    } else {
        down = below;
    }
    if (r + 1u == S2_ROWS) {
        up = region[k + S2_SIDE];
    } else {
        up = cur[r + 1u];
    }
    var sum: f32;
    if (S2_WEIGHTED) {
        let wt = weight[r];
        sum = wt.x * region[k - 1u] + wt.y * region[k + 1u] + wt.z * down + wt.w * up;
    } else {
        sum = region[k - 1u] + region[k + 1u] + down + up;
    }
    let pj = (sum + bval[r]) / count[r];
    next_val[r] = old + params.omega * (pj - old);
}

// Make row r's new value current and publish it.
fn publish(r: u32) {
    cur[r] = next_val[r];
    region[(row0 + r) * S2_SIDE + col] = cur[r];
}

// Write row r (the iterate after four passes to tmp) when it lies in the tile and the level.
fn emit(r: u32) {
    let local = vec2<u32>(col, row0 + r);
    let g = origin + vec2<i32>(local);
    let in_tile = all(local >= vec2<u32>(S2_HALO)) && all(local < vec2<u32>(S2_HALO + S2_TILE));
    if (in_tile && g.x < i32(params.nx) && g.y < i32(params.ny)) {
        let c = u32(g.y) * params.nx + u32(g.x);
        mg[params.tmp + c] = cur[r];
        if ((params.colour & S2_ACCUMULATE) != 0u) {
            let sum = df_add(pressure[c], pressure_lo[c], cur[r]);
            pressure[c] = sum.x;
            pressure_lo[c] = sum.y;
        }
    }
}

// The residual b - A p of row r's cell after the passes, when it lies in the tile and the level
// (the arithmetic of residual_at), into resid.
fn residual_row(r: u32) {
    let local = vec2<u32>(col, row0 + r);
    let g = origin + vec2<i32>(local);
    let in_tile = all(local >= vec2<u32>(S2_HALO)) && all(local < vec2<u32>(S2_HALO + S2_TILE));
    if (in_tile && g.x < i32(params.nx) && g.y < i32(params.ny)) {
        let k = local.y * S2_SIDE + local.x;
        var sum: f32;
        if (S2_WEIGHTED) {
            let wt = weight[r];
            sum = wt.x * region[k - 1u] + wt.y * region[k + 1u] + wt.z * region[k - S2_SIDE] + wt.w * region[k + S2_SIDE];
        } else {
            sum = region[k - 1u] + region[k + 1u] + region[k - S2_SIDE] + region[k + S2_SIDE];
        }
        resid[k] = bval[r] - (count[r] * cur[r] - sum);
    }
}

// Coarse cell `index` (of the tile's S2_TILE/2 squared): the sum of its children's residuals in
// the order (0,0), (1,0), (0,1), (1,1) into the coarse b, the coarse p set to zero (the
// arithmetic of restrict_cell).
fn restrict_tile(index: u32, wg: vec2<u32>) {
    let half = S2_TILE / 2u;
    if (index >= half * half) {
        return;
    }
    let c = wg * half + vec2<u32>(index % half, index / half);
    if (c.x >= params.cnx || c.y >= params.cny) {
        return;
    }
    var r = 0.0;
    for (var k = 0u; k < 4u; k++) {
        let i = 2u * c.x + (k & 1u);
        let j = 2u * c.y + (k >> 1u);
        if (i < params.nx && j < params.ny) {
            let local = vec2<u32>(i, j) - wg * S2_TILE + vec2<u32>(S2_HALO);
            r += resid[local.y * S2_SIDE + local.x];
        }
    }
    let at = c.y * params.cnx + c.x;
    mg[params.cb + at] = r;
    mg[params.cp + at] = 0.0;
}

fn pass_of(colour: u32) {
    relax(0u, colour); relax(1u, colour); relax(2u, colour); relax(3u, colour);
    workgroupBarrier();
    publish(0u); publish(1u); publish(2u); publish(3u);
    workgroupBarrier();
}

// The kernel's body (the entry points of mg_smooth2.wgsl and mg_smooth2_solid.wgsl call it).
fn smooth2(lid: u32, wg: vec3<u32>) {
    origin = vec2<i32>(i32(wg.x * S2_TILE), i32(wg.y * S2_TILE)) - vec2<i32>(i32(S2_HALO));
    col = lid % S2_SIDE;
    row0 = lid / S2_SIDE * S2_ROWS;
    edge_col = col == 0u || col + 1u == S2_SIDE;
    let nx = i32(params.nx);
    gx = origin.x + i32(col);
    if (px()) {
        gx = wrap(gx, nx);
    }
    col_in = gx >= 0 && gx < nx;
    col_count = axis_count(gx, nx, px());
    fetch(0u); fetch(1u); fetch(2u); fetch(3u);
    workgroupBarrier();
    let first = params.colour & 1u;
    pass_of(first);
    pass_of(1u - first);
    pass_of(first);
    pass_of(1u - first);
    emit(0u); emit(1u); emit(2u); emit(3u);
    if ((params.colour & S2_RESTRICT) != 0u) {
        residual_row(0u); residual_row(1u); residual_row(2u); residual_row(3u);
        workgroupBarrier();
        restrict_tile(lid, wg.xy);
    }
}
