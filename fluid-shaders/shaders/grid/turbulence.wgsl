// One invocation: curl-noise turbulence on u-face (i, j) and v-face (i, j). A stream function
// psi of value noise (octaves of a hashed lattice in x, y and time, quintic fade) is sampled at
// the cell corners; the force is its curl, (d psi / dy, -d psi / dx), as differences across
// each face, so the unmasked force has zero discrete divergence; psi fades to zero toward the
// walls, so none crosses them. On a periodic axis the lattice wraps with the box. Optionally weighted by a cell field beside the face (the smoke
// or the heat), and by the face's open fraction with obstacles (twin of
// fluid-cpu/src/kernels/turbulence.rs).

@group(0) @binding(2) var<uniform> params: TurbulenceParams;
@group(1) @binding(0) var<storage, read_write> u: array<f32>;
@group(1) @binding(1) var<storage, read_write> v: array<f32>;
@group(1) @binding(2) var<storage, read> mask: array<f32>;
@group(1) @binding(3) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(4) var<storage, read> v_faces: array<vec2<f32>>;

fn lattice_hash(x: u32, y: u32, z: u32) -> f32 {
    var h = (x * 0x8da6b343u) ^ (y * 0xd8163841u) ^ (z * 0xcb1ab31fu);
    h = (h ^ (h >> 16u)) * 0x7feb352du;
    h = (h ^ (h >> 15u)) * 0x846ca68bu;
    h = h ^ (h >> 16u);
    return f32(h >> 8u) * (2.0 / 16777216.0) - 1.0;
}

fn fade(t: f32) -> f32 {
    return t * t * t * (t * (t * 6.0 - 15.0) + 10.0);
}

// Lattice indices of the cell holding coordinate p, wrapped by `period` (0: none).
fn corners(p: f32, period: u32) -> vec2<u32> {
    let k = i32(floor(p));
    if (period == 0u) {
        return vec2<u32>(bitcast<u32>(k), bitcast<u32>(k + 1));
    }
    let n = i32(period);
    let a = ((k % n) + n) % n;
    return vec2<u32>(u32(a), u32((a + 1) % n));
}

fn value_noise(x: f32, y: f32, z: f32, px_: u32, py_: u32) -> f32 {
    let cx = corners(x, px_);
    let cy = corners(y, py_);
    let cz = corners(z, 0u);
    let tx = fade(x - floor(x));
    let ty = fade(y - floor(y));
    let tz = fade(z - floor(z));
    let a = lerp2(lattice_hash(cx.x, cy.x, cz.x), lattice_hash(cx.y, cy.x, cz.x), lattice_hash(cx.x, cy.y, cz.x),
        lattice_hash(cx.y, cy.y, cz.x), tx, ty);
    let b = lerp2(lattice_hash(cx.x, cy.x, cz.y), lattice_hash(cx.y, cy.x, cz.y), lattice_hash(cx.x, cy.y, cz.y),
        lattice_hash(cx.y, cy.y, cz.y), tx, ty);
    return a + (b - a) * tz;
}

// The stream function at corner (i, j) (canonical indices: a periodic axis's last corner is
// its first).
fn psi(i: u32, j: u32) -> f32 {
    let x = f32(i) * grid.h * params.inv_scale.x;
    let y = f32(j) * grid.h * params.inv_scale.y;
    let z = inputs.time * params.speed;
    var sum = 0.0;
    var f = 1.0;
    var w = 1.0;
    for (var k = 0u; k < params.octaves; k++) {
        sum += w * value_noise(x * f, y * f, z * f + 17.0 * f32(k), params.period.x * u32(f), params.period.y * u32(f));
        f *= 2.0;
        w *= 0.5;
    }
    return params.amplitude * sum / params.inv_scale.x * wall_ramp(i, j);
}

// Bridson's ramp: 0 at 0, 1 from 1 on, smooth between.
fn ramp(r: f32) -> f32 {
    let x = min(r, 1.0);
    return x * (15.0 / 8.0 - x * x * (10.0 / 8.0 - x * x * (3.0 / 8.0)));
}

// psi fades to zero over one eddy toward each wall (a side nothing crosses), so that no
// flow is pushed through it (Bridson, Hourihan & Nordenstam 2007).
fn wall_ramp(i: u32, j: u32) -> f32 {
    var w = 1.0;
    if (u_on_wall(0u)) {
        w *= ramp(f32(i) * grid.h * params.inv_scale.x);
    }
    if (u_on_wall(grid.nx)) {
        w *= ramp(f32(grid.nx - i) * grid.h * params.inv_scale.x);
    }
    if (v_on_wall(0u)) {
        w *= ramp(f32(j) * grid.h * params.inv_scale.y);
    }
    if (v_on_wall(grid.ny)) {
        w *= ramp(f32(grid.ny - j) * grid.h * params.inv_scale.y);
    }
    return w;
}

fn corner_x(i: u32) -> u32 { return select(i, 0u, px() && i == grid.nx); }
fn corner_y(j: u32) -> u32 { return select(j, 0u, py() && j == grid.ny); }

// The mask's weight between cells a and b (the same cell at an edge).
fn weight(a: u32, b: u32) -> f32 {
    if (params.mask == 0u) {
        return 1.0;
    }
    let m = 0.5 * (mask[a] + mask[b]);
    return clamp((m - params.mask_offset) / params.mask_full, 0.0, 1.0);
}

// The cell before face c along an axis of n cells (the last cell past the far edge), or cell
// c itself at the near edge.
fn before(c: u32, n: u32, periodic: bool) -> u32 {
    let k = prev(c, n, periodic);
    return select(u32(k), c, k == NONE);
}

@compute @workgroup_size(WG_X, WG_Y)
fn turbulence(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i > grid.nx || j > grid.ny) {
        return;
    }
    let on_u = j < grid.ny && !u_on_wall(i);
    let on_v = i < grid.nx && !v_on_wall(j);
    if (!on_u && !on_v) {
        return;
    }
    // The two faces share corner (i, j): three samples of psi, not four.
    let ic = corner_x(i);
    let jc = corner_y(j);
    let p00 = psi(ic, jc);
    let dt = inputs.dt;
    if (on_u) {
        let r = min(ic, grid.nx - 1u);
        var f = (psi(ic, corner_y(j + 1u)) - p00) * grid.inv_h;
        f *= weight(ci(before(ic, grid.nx, px()), j), ci(r, j));
        if (grid.solids != 0u) {
            f *= u_faces[ui_(i, j)].x;
        }
        u[ui_(i, j)] += dt * f;
    }
    if (on_v) {
        let t = min(jc, grid.ny - 1u);
        var f = -(psi(corner_x(i + 1u), jc) - p00) * grid.inv_h;
        f *= weight(ci(i, before(jc, grid.ny, py())), ci(i, t));
        if (grid.solids != 0u) {
            f *= v_faces[vi_(i, j)].x;
        }
        v[vi_(i, j)] += dt * f;
    }
}
