// Shared by every kernel (prepended to each shader, after the blocks of params.wgsl): index
// helpers, boundary handling and the interpolation stencil. Twin of
// fluid-cpu/src/kernels/common/mod.rs.

// Workgroup shape of the 2D kernels (the backend may substitute another at load time).
const WG_X: u32 = 16u;
const WG_Y: u32 = 16u;

// The side codes, the field flags and the splat's falloff codes are in params.wgsl, written
// from the Rust that sets them.
const LEFT: u32 = 0u;
const RIGHT: u32 = 1u;
const BOTTOM: u32 = 2u;
const TOP: u32 = 3u;
const NONE: i32 = -1;

@group(0) @binding(0) var<uniform> grid: GridUniform;
@group(0) @binding(1) var<uniform> inputs: StepUniform;

fn nx() -> u32 { return grid.nx; }
fn ny() -> u32 { return grid.ny; }
fn px() -> bool { return grid.boundary_x == BOUNDARY_PERIODIC; }
fn py() -> bool { return grid.boundary_y == BOUNDARY_PERIODIC; }

// Flat indices of cell (i, j), u-face (i, j), v-face (i, j).
fn ci(i: u32, j: u32) -> u32 { return j * grid.nx + i; }
fn ui_(i: u32, j: u32) -> u32 { return j * (grid.nx + 1u) + i; }
fn vi_(i: u32, j: u32) -> u32 { return j * grid.nx + i; }

fn side_open(k: u32) -> bool { return grid.sides[k] == SIDE_OPEN; }
// The pressure solve's weight of the box's edge on side k: 1 past an open side (zero pressure
// there), 0 past a closed one. The rasterised fractions of edge faces are not read.
fn edge_weight(k: u32) -> f32 { return select(0.0, 1.0, side_open(k)); }
fn side_inflow(k: u32) -> bool { return grid.sides[k] == SIDE_INFLOW || grid.sides[k] == SIDE_INFLOW_PARABOLIC; }

// The faces on the box's edge (not along a periodic axis).
fn u_on_edge(i: u32) -> bool { return !px() && (i == 0u || i == grid.nx); }
fn v_on_edge(j: u32) -> bool { return !py() && (j == 0u || j == grid.ny); }

// Wall faces: the edge faces of closed sides (walls and inflows), whose velocity is given
// (wall_u / wall_v); an open side's edge faces are unknowns like the inner ones.
fn u_on_wall(i: u32) -> bool { return u_on_edge(i) && !side_open(select(RIGHT, LEFT, i == 0u)); }
fn v_on_wall(j: u32) -> bool { return v_on_edge(j) && !side_open(select(TOP, BOTTOM, j == 0u)); }

// Inward speed of side k at s in [0, 1] along it: an inflow's (uniform, or a parabola peaking
// mid-side), zero elsewhere.
fn inflow_speed(k: u32, s: f32) -> f32 {
    let code = grid.sides[k];
    if (code == SIDE_INFLOW) {
        return grid.side_speed[k];
    }
    if (code == SIDE_INFLOW_PARABOLIC) {
        return grid.side_speed[k] * 4.0 * s * (1.0 - s);
    }
    return 0.0;
}

// The velocity of wall face u (i, j) / v (i, j): zero on a wall, the inflow on an inflow.
fn wall_u(i: u32, j: u32) -> f32 {
    let s = (f32(j) + 0.5) / f32(grid.ny);
    return select(-inflow_speed(RIGHT, s), inflow_speed(LEFT, s), i == 0u);
}
fn wall_v(i: u32, j: u32) -> f32 {
    let s = (f32(i) + 0.5) / f32(grid.nx);
    return select(-inflow_speed(TOP, s), inflow_speed(BOTTOM, s), j == 0u);
}

// Sides that fix the tangential velocity (the viscous step's ghost 2 v_side - v): a no-slip
// wall at its speed, an inflow at zero.
fn holds_tangent(k: u32) -> bool { return grid.sides[k] == SIDE_NO_SLIP || side_inflow(k); }
fn tangent_speed(k: u32) -> f32 { return select(0.0, grid.side_speed[k], grid.sides[k] == SIDE_NO_SLIP); }

// Canonical face index: on a periodic axis face n is face 0.
fn canon_u(i: u32) -> u32 { return select(i, 0u, px() && i == grid.nx); }
fn canon_v(j: u32) -> u32 { return select(j, 0u, py() && j == grid.ny); }

// Neighbour i - 1 / i + 1 of a cell column along an axis of n cells, NONE past a wall.
fn prev(i: u32, n: u32, periodic: bool) -> i32 {
    if (i > 0u) { return i32(i) - 1; }
    if (periodic) { return i32(n) - 1; }
    return NONE;
}
fn next(i: u32, n: u32, periodic: bool) -> i32 {
    if (i + 1u < n) { return i32(i) + 1; }
    if (periodic) { return 0; }
    return NONE;
}

// Sample i + d (d is -1, 0 or 1) along an axis of `count` samples: walls repeat the end
// sample, periodic axes wrap (twin of common::clamp_or_wrap in swirly-cpu).
fn clamp_or_wrap(i: u32, d: i32, count: u32, periodic: bool) -> u32 {
    let k = i32(i) + d;
    if (periodic) {
        return u32((k + i32(count)) % i32(count));
    }
    return u32(clamp(k, 0, i32(count) - 1));
}

struct Stencil {
    i0: u32,
    i1: u32,
    t: f32,
}

// Interpolation stencil for coordinate g (sample units) along an axis of n cells; faces:
// samples at 0..=n. Walls clamp (a NaN maps to 0, like the CPU's max/min), periodic wraps. On a
// wall axis with two samples or more i1 = i0 + 1 always (the last sample is reached with t = 1).
fn stencil(g: f32, n: u32, faces: bool, periodic: bool) -> Stencil {
    var s: Stencil;
    if (periodic) {
        let fl = floor(g);
        s.t = g - fl;
        let ni = i32(n);
        let i0 = ((i32(fl) % ni) + ni) % ni;
        s.i0 = u32(i0);
        s.i1 = select(select(s.i0 + 1u, 0u, s.i0 + 1u == n), s.i0 + 1u, faces);
        return s;
    }
    let last = select(n - 1u, n, faces);
    let x = min(max(g, 0.0), f32(last));
    s.i0 = min(u32(x), max(last, 1u) - 1u);
    s.i1 = min(s.i0 + 1u, last);
    s.t = x - f32(s.i0);
    return s;
}

fn lerp2(c00: f32, c10: f32, c01: f32, c11: f32, tx: f32, ty: f32) -> f32 {
    let a = c00 + (c10 - c00) * tx;
    let b = c01 + (c11 - c01) * tx;
    return a + (b - a) * ty;
}
