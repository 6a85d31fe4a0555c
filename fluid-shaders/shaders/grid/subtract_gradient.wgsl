// One invocation: make u-face (i, j) and v-face (i, j) divergence-free: u -= dt (p_right -
// p_left) / h, the pressure the double-float pressure + pressure_lo (high and low parts
// differenced separately). Wall faces keep their given velocity; with face weights a closed
// face takes the solid's, and an open side's edge face (wholly open, whatever an obstacle
// covers) sees zero pressure past it.
// #include solid

@group(1) @binding(0) var<storage, read_write> u: array<f32>;
@group(1) @binding(1) var<storage, read_write> v: array<f32>;
@group(1) @binding(2) var<storage, read> pressure: array<f32>;
@group(1) @binding(3) var<storage, read> pressure_lo: array<f32>;
@group(1) @binding(4) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(5) var<storage, read> v_faces: array<vec2<f32>>;

// p[a] - p[b] of the double-float pressure.
fn pressure_difference(a: u32, b: u32) -> f32 {
    return (pressure[a] - pressure[b]) + (pressure_lo[a] - pressure_lo[b]);
}

@compute @workgroup_size(WG_X, WG_Y)
fn subtract_gradient(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i > grid.nx || j > grid.ny) {
        return;
    }
    let k = inputs.dt * grid.inv_h;
    if (j < grid.ny) {
        let f = ui_(i, j);
        if (u_on_wall(i)) {
            u[f] = wall_u(i, j);
        } else if (u_on_edge(i)) {
            let c = ci(select(grid.nx - 1u, 0u, i == 0u), j);
            let inside = pressure[c] + pressure_lo[c];
            u[f] = u[f] - k * select(-inside, inside, i == 0u);
        } else if (grid.solids != 0u && u_faces[f].x == 0.0) {
            u[f] = u_faces[f].y;
        } else {
            let ic = canon_u(i);
            let left = select(grid.nx - 1u, ic - 1u, ic > 0u);
            u[f] = u[f] - k * pressure_difference(ci(ic, j), ci(left, j));
        }
    }
    if (i < grid.nx) {
        let f = vi_(i, j);
        if (v_on_wall(j)) {
            v[f] = wall_v(i, j);
        } else if (v_on_edge(j)) {
            let c = ci(i, select(grid.ny - 1u, 0u, j == 0u));
            let inside = pressure[c] + pressure_lo[c];
            v[f] = v[f] - k * select(-inside, inside, j == 0u);
        } else if (grid.solids != 0u && v_faces[f].x == 0.0) {
            v[f] = v_faces[f].y;
        } else {
            let jc = canon_v(j);
            let down = select(grid.ny - 1u, jc - 1u, jc > 0u);
            v[f] = v[f] - k * pressure_difference(ci(i, jc), ci(i, down));
        }
    }
}
