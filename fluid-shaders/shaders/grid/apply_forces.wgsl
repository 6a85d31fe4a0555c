// One invocation: update u-face (i, j) and v-face (i, j) with gravity, Boussinesq buoyancy
// (averaged from the two cells beside a v-face) and vorticity confinement e*h*(N x w)
// (averaged from the two cells beside a face). The max-speed limit is clamp_speed's.

@group(0) @binding(2) var<uniform> params: ForceParams;
@group(1) @binding(0) var<storage, read_write> u: array<f32>;
@group(1) @binding(1) var<storage, read_write> v: array<f32>;
@group(1) @binding(2) var<storage, read> density: array<f32>;
@group(1) @binding(3) var<storage, read> temperature: array<f32>;
@group(1) @binding(4) var<storage, read> curl: array<f32>;
@group(1) @binding(5) var<storage, read> solid: array<f32>;

fn or_self(k: i32, self_: u32) -> u32 { return select(u32(k), self_, k == NONE); }

// Whether cell (i, j) holds fluid (is not wholly inside a solid); read only with solids.
fn fluid_cell(i: u32, j: u32) -> bool { return solid[ci(i, j)] < 1.0; }

// The confinement force of cell (i, j). With solids, a cell wholly inside one has none, and a
// neighbour wholly inside one is treated as a wall (one-sided difference): the solid's own
// rotation does not steer the fluid's.
fn confinement(i: u32, j: u32) -> vec2<f32> {
    var il = or_self(prev(i, grid.nx, px()), i);
    var ir = or_self(next(i, grid.nx, px()), i);
    var jd = or_self(prev(j, grid.ny, py()), j);
    var ju = or_self(next(j, grid.ny, py()), j);
    var sx = select(f32(i32(ir) - i32(il)), 2.0, px());
    var sy = select(f32(i32(ju) - i32(jd)), 2.0, py());
    if (grid.solids != 0u) {
        if (!fluid_cell(i, j)) {
            return vec2<f32>(0.0);
        }
        il = select(i, il, fluid_cell(il, j));
        ir = select(i, ir, fluid_cell(ir, j));
        jd = select(j, jd, fluid_cell(i, jd));
        ju = select(j, ju, fluid_cell(i, ju));
        sx = f32(il != i) + f32(ir != i);
        sy = f32(jd != j) + f32(ju != j);
    }
    let w = curl[ci(i, j)];
    var gx = 0.0;
    if (sx > 0.0) {
        gx = (abs(curl[ci(ir, j)]) - abs(curl[ci(il, j)])) / (sx * grid.h);
    }
    var gy = 0.0;
    if (sy > 0.0) {
        gy = (abs(curl[ci(i, ju)]) - abs(curl[ci(i, jd)])) / (sy * grid.h);
    }
    let len = sqrt(gx * gx + gy * gy);
    if (len <= 1e-20) {
        return vec2<f32>(0.0);
    }
    let n = vec2<f32>(gx / len, gy / len);
    return vec2<f32>(params.vorticity * grid.h * n.y * w, -params.vorticity * grid.h * n.x * w);
}

fn buoyancy(c: u32) -> f32 {
    return -params.density_weight * density[c] + params.temperature_lift * (temperature[c] - params.ambient_temperature);
}

@compute @workgroup_size(WG_X, WG_Y)
fn apply_forces(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i > grid.nx || j > grid.ny) {
        return;
    }
    let dt = inputs.dt;
    if (j < grid.ny) {
        let k = ui_(i, j);
        if (u_on_wall(i)) {
            u[k] = wall_u(i, j);
        } else {
            let ic = canon_u(i);
            var a = params.gravity.x;
            if (params.vorticity != 0.0) {
                let left = or_self(prev(ic, grid.nx, px()), ic);
                let right = select(left, ic, ic < grid.nx);
                a += 0.5 * (confinement(left, j).x + confinement(right, j).x);
            }
            u[k] = u[k] + dt * a;
        }
    }
    if (i < grid.nx) {
        let k = vi_(i, j);
        if (v_on_wall(j)) {
            v[k] = wall_v(i, j);
        } else {
            let jc = canon_v(j);
            let down = or_self(prev(jc, grid.ny, py()), jc);
            let up = select(down, jc, jc < grid.ny);
            var a = params.gravity.y;
            if (params.density_weight != 0.0 || params.temperature_lift != 0.0) {
                a += 0.5 * (buoyancy(ci(i, down)) + buoyancy(ci(i, up)));
            }
            if (params.vorticity != 0.0) {
                a += 0.5 * (confinement(i, down).y + confinement(i, up).y);
            }
            v[k] = v[k] + dt * a;
        }
    }
}
