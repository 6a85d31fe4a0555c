// #include obstacles
// One invocation per face pair (i, j): the obstacles where they stand at the step's end
// (time + dt) rasterised onto x-face (i, j), y-face (i, j) and cell (i, j) (twin of
// fluid-cpu/src/kernels/rasterise_solids.rs, whose reference is swirly_core::grid::solid).
// A face's open fraction comes from the signed distance at its two end nodes, taken as linear
// between them; a face not wholly open carries the velocity of the nearest solid at its
// centre, v + w x r. A cell's solid fraction is 1 - the mean open fraction of its faces; a
// cell wholly inside holds no density or dye and the ambient temperature. The table
// (shared/obstacles.wgsl) is walked to its end.

@group(0) @binding(2) var<uniform> params: AdvectParams;
@group(1) @binding(0) var<storage, read> obstacles: array<vec4<f32>>;
@group(1) @binding(1) var<storage, read_write> u_faces: array<vec2<f32>>;
@group(1) @binding(2) var<storage, read_write> v_faces: array<vec2<f32>>;
@group(1) @binding(3) var<storage, read_write> solid: array<f32>;
@group(1) @binding(4) var<storage, read_write> density: array<f32>;
@group(1) @binding(5) var<storage, read_write> temperature: array<f32>;
@group(1) @binding(6) var<storage, read_write> dye: array<vec4<f32>>;
@group(1) @binding(7) var<storage, read_write> fuel: array<f32>;

fn open_fraction(a: f32, b: f32) -> f32 {
    if (a > 0.0 && b > 0.0) {
        return 1.0;
    }
    if (a <= 0.0 && b <= 0.0) {
        return 0.0;
    }
    if (a > 0.0) {
        return a / (a - b);
    }
    return b / (b - a);
}

// Signed distance at node (x, y), the last node of a periodic axis computed as the first.
fn node(x: u32, y: u32, t: f32) -> f32 {
    let xc = select(x, 0u, px() && x == grid.nx);
    let yc = select(y, 0u, py() && y == grid.ny);
    return nearest(vec2<f32>(f32(xc) * grid.h, f32(yc) * grid.h), t).d;
}

// The face between nodes a and b whose centre is `centre`: its open fraction and the solid's
// velocity component `axis` there.
fn face(a: f32, b: f32, centre: vec2<f32>, axis: u32, t: f32) -> vec2<f32> {
    let open = open_fraction(a, b);
    var vel = 0.0;
    if (open < 1.0) {
        let n = nearest(centre, t);
        if (n.found) {
            vel = solid_velocity(n.at, t, centre)[axis];
        }
    }
    return vec2<f32>(open, vel);
}

@compute @workgroup_size(WG_X, WG_Y)
fn rasterise_solids(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i > grid.nx || j > grid.ny) {
        return;
    }
    let t = inputs.time + inputs.dt;
    let n00 = node(i, j, t);
    if (j < grid.ny) {
        let ic = canon_u(i);
        let a = select(n00, node(ic, j, t), ic != i);
        let centre = vec2<f32>(f32(ic) * grid.h, (f32(j) + 0.5) * grid.h);
        u_faces[ui_(i, j)] = face(a, node(ic, j + 1u, t), centre, 0u, t);
    }
    if (i < grid.nx) {
        let jc = canon_v(j);
        let a = select(n00, node(i, jc, t), jc != j);
        let centre = vec2<f32>((f32(i) + 0.5) * grid.h, f32(jc) * grid.h);
        v_faces[vi_(i, j)] = face(a, node(i + 1u, jc, t), centre, 1u, t);
    }
    if (i < grid.nx && j < grid.ny) {
        let n10 = node(i + 1u, j, t);
        let n01 = node(i, j + 1u, t);
        let n11 = node(i + 1u, j + 1u, t);
        let us = open_fraction(n00, n01) + open_fraction(n10, n11);
        let vs = open_fraction(n00, n10) + open_fraction(n01, n11);
        let s = 1.0 - 0.25 * (us + vs);
        let c = ci(i, j);
        solid[c] = s;
        if (s == 1.0) {
            if ((params.fields & ADVECT_DENSITY) != 0u) {
                density[c] = 0.0;
            }
            if ((params.fields & ADVECT_TEMPERATURE) != 0u) {
                temperature[c] = params.ambient_temperature;
            }
            if ((params.fields & ADVECT_DYE) != 0u) {
                dye[c] = vec4<f32>(0.0);
            }
            if ((params.fields & CARRY_FUEL) != 0u) {
                fuel[c] = 0.0;
            }
        }
    }
}
