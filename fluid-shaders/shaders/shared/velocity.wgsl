// Shared by the advection kernels (which bind `u` and `v`): bilinear velocity sampling and
// the backtrace. Twin of sample_u / sample_v / backtrace in fluid-cpu/src/kernels/common/mod.rs.
// Positions are in cell units (world position / h): cell (i, j) spans [i, i + 1] x [j, j + 1],
// so the samples of a face or cell sit at whole or half cells exactly.

fn sample_u(p: vec2<f32>) -> f32 {
    let sx = stencil(p.x, grid.nx, true, px());
    let sy = stencil(p.y - 0.5, grid.ny, false, py());
    return lerp2(u[ui_(sx.i0, sy.i0)], u[ui_(sx.i1, sy.i0)], u[ui_(sx.i0, sy.i1)], u[ui_(sx.i1, sy.i1)], sx.t, sy.t);
}

fn sample_v(p: vec2<f32>) -> f32 {
    let sx = stencil(p.x - 0.5, grid.nx, false, px());
    let sy = stencil(p.y, grid.ny, true, py());
    return lerp2(v[vi_(sx.i0, sy.i0)], v[vi_(sx.i1, sy.i0)], v[vi_(sx.i0, sy.i1)], v[vi_(sx.i1, sy.i1)], sx.t, sy.t);
}

fn velocity_at(p: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(sample_u(p), sample_v(p));
}

// Where the fluid now at p (cell units) was dt ago: Euler (1), midpoint (2) or Ralston RK3
// (3). s = dt / h turns a velocity into cells per step.
fn backtrace(p: vec2<f32>, order: u32, s: f32) -> vec2<f32> {
    let k1 = velocity_at(p);
    if (order == 1u) {
        return p - s * k1;
    }
    let k2 = velocity_at(p - 0.5 * s * k1);
    if (order == 2u) {
        return p - s * k2;
    }
    let k3 = velocity_at(p - 0.75 * s * k2);
    return p - s * (2.0 / 9.0 * k1 + 3.0 / 9.0 * k2 + 4.0 / 9.0 * k3);
}

// How far past an open side point b (cell units) lies, up to one cell: the weight of the
// ambient fluid at rest beyond it in what a backtrace there carries in (0 inside the box).
fn backflow_weight(b: vec2<f32>) -> f32 {
    let past = array<f32, 4>(-b.x, b.x - f32(grid.nx), -b.y, b.y - f32(grid.ny));
    var w = 0.0;
    for (var k = 0u; k < 4u; k++) {
        if (side_open(k) && past[k] > w) {
            w = past[k];
        }
    }
    return min(w, 1.0);
}

struct Carried {
    w: f32,
    k: u32,
}

// The heaviest inflow side at point b (cell units): weight 0 at the first cell's centre, 1 at
// the ghost's and beyond.
fn inflow_weight(b: vec2<f32>) -> Carried {
    var r: Carried;
    r.w = 0.0;
    r.k = 0u;
    let w = array<f32, 4>(0.5 - b.x, b.x - (f32(grid.nx) - 0.5), 0.5 - b.y, b.y - (f32(grid.ny) - 0.5));
    for (var k = 0u; k < 4u; k++) {
        let wk = clamp(w[k], 0.0, 1.0);
        if (side_inflow(k) && wk > r.w) {
            r.w = wk;
            r.k = k;
        }
    }
    return r;
}

// 1 where side k carries smoke and dye at b: everywhere, or in its bands (2n + 1 equal slots
// along the side, the odd ones bands).
fn in_band(k: u32, b: vec2<f32>) -> f32 {
    let n = grid.side_carry[k].z;
    if (n == 0.0) {
        return 1.0;
    }
    let s = clamp(select(b.x / f32(grid.nx), b.y / f32(grid.ny), k < 2u), 0.0, 1.0);
    let slot = u32(floor(s * (2.0 * n + 1.0)));
    return select(0.0, 1.0, (slot & 1u) == 1u);
}
