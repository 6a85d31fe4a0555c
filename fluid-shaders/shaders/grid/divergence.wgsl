// One invocation: the divergence (u_right - u_left + v_top - v_bottom) / h of cell (i, j).

@group(1) @binding(0) var<storage, read> u: array<f32>;
@group(1) @binding(1) var<storage, read> v: array<f32>;
@group(1) @binding(2) var<storage, read_write> divergence_out: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn divergence(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    divergence_out[ci(i, j)] = (u[ui_(i + 1u, j)] - u[ui_(i, j)] + v[vi_(i, j + 1u)] - v[vi_(i, j)]) * grid.inv_h;
}
