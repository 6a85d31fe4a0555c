// #include velocity
// One invocation: the semi-Lagrangian value of u-face (i, j) and v-face (i, j): trace the
// face position back along the velocity and sample there, times the dissipation factor. A
// point traced back past an open side blends toward the ambient fluid at rest beyond it
// (backflow_weight): fluid drawn in through an outflow brings no momentum.

@group(0) @binding(2) var<uniform> params: AdvectParams;
@group(1) @binding(0) var<storage, read> u: array<f32>;
@group(1) @binding(1) var<storage, read> v: array<f32>;
@group(1) @binding(2) var<storage, read_write> u_out: array<f32>;
@group(1) @binding(3) var<storage, read_write> v_out: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn advect_velocity(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i > grid.nx || j > grid.ny) {
        return;
    }
    let dt = inputs.dt;
    let decay = exp(-params.velocity_dissipation * dt);
    let s = dt * grid.inv_h;
    if (j < grid.ny) {
        var val = wall_u(i, j);
        if (!u_on_wall(i)) {
            let b = backtrace(vec2<f32>(f32(canon_u(i)), f32(j) + 0.5), params.order, s);
            val = sample_u(b) * decay;
            let w = backflow_weight(b);
            if (w > 0.0) {
                val = val * (1.0 - w);
            }
        }
        u_out[ui_(i, j)] = val;
    }
    if (i < grid.nx) {
        var val = wall_v(i, j);
        if (!v_on_wall(j)) {
            let b = backtrace(vec2<f32>(f32(i) + 0.5, f32(canon_v(j))), params.order, s);
            val = sample_v(b) * decay;
            let w = backflow_weight(b);
            if (w > 0.0) {
                val = val * (1.0 - w);
            }
        }
        v_out[vi_(i, j)] = val;
    }
}
