// #include double_float
// One invocation: cell c of level 0: alpha = (r.z) / (d.q) cut to 12 significant bits (zero
// unless both are positive); x += alpha d in double-float with the product exact; r -= alpha q (twin of
// fluid-cpu/src/kernels/cg_update.rs).

@group(0) @binding(2) var<uniform> params: CgParams;
@group(1) @binding(0) var<storage, read_write> mg: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn cg_update(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.nx || id.y >= params.ny) {
        return;
    }
    let c = id.y * params.nx + id.x;
    let n = params.nx * params.ny;
    let dq = mg[params.scalars + 2u];
    let rz = mg[params.scalars + params.slot];
    let alpha = select(0.0, trunc12(rz / dq), dq > 0.0 && rz > 0.0);
    let x = df_add_product(mg[params.x + c], mg[params.x + n + c], alpha, mg[params.d + c]);
    mg[params.x + c] = x.x;
    mg[params.x + n + c] = x.y;
    mg[params.r + c] = mg[params.r + c] - alpha * mg[params.q + c];
}
