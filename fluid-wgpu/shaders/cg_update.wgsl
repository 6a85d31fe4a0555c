// One invocation: cell c of level 0: alpha = (r.z) / (d.q) (zero when d.q is); x += alpha d,
// r -= alpha q (twin of fluid-cpu/src/kernels/cg_update.rs).

@group(0) @binding(2) var<uniform> params: CgParams;
@group(1) @binding(0) var<storage, read_write> mg: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn cg_update(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.nx || id.y >= params.ny) {
        return;
    }
    let c = id.y * params.nx + id.x;
    let dq = mg[params.scalars + 2u];
    let alpha = select(mg[params.scalars + params.slot] / dq, 0.0, dq == 0.0);
    mg[params.x + c] = mg[params.x + c] + alpha * mg[params.d + c];
    mg[params.r + c] = mg[params.r + c] - alpha * mg[params.q + c];
}
