// #include solid
// One invocation: the divergence (u_right - u_left + v_top - v_bottom) / h of cell (i, j);
// with face weights each face's flux is its open part's fluid velocity plus its closed part's
// solid velocity; a wall face carries its given velocity (zero, or an inflow's), an open
// side's edge face its fluid's.

@group(1) @binding(0) var<storage, read> u: array<f32>;
@group(1) @binding(1) var<storage, read> v: array<f32>;
@group(1) @binding(2) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(3) var<storage, read> v_faces: array<vec2<f32>>;
@group(1) @binding(4) var<storage, read_write> divergence_out: array<f32>;

fn flux_u(i: u32, j: u32) -> f32 {
    if (u_on_wall(i)) {
        return wall_u(i, j);
    }
    if (u_on_edge(i)) {
        return u[ui_(i, j)];
    }
    return u_flux(u[ui_(i, j)], i, j);
}
fn flux_v(i: u32, j: u32) -> f32 {
    if (v_on_wall(j)) {
        return wall_v(i, j);
    }
    if (v_on_edge(j)) {
        return v[vi_(i, j)];
    }
    return v_flux(v[vi_(i, j)], i, j);
}

@compute @workgroup_size(WG_X, WG_Y)
fn divergence(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    if (grid.solids != 0u) {
        divergence_out[ci(i, j)] = (flux_u(i + 1u, j) - flux_u(i, j) + flux_v(i, j + 1u) - flux_v(i, j)) * grid.inv_h;
        return;
    }
    divergence_out[ci(i, j)] = (u[ui_(i + 1u, j)] - u[ui_(i, j)] + v[vi_(i, j + 1u)] - v[vi_(i, j)]) * grid.inv_h;
}
