// One invocation: cell c of level 0: d = z + beta d, beta = (r.z) / (r.z of the previous
// iteration); d = z on the first iteration and whenever r.z did not fall or is not positive (twin of
// fluid-cpu/src/kernels/cg_direction.rs).

@group(0) @binding(2) var<uniform> params: CgParams;
@group(1) @binding(0) var<storage, read_write> mg: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn cg_direction(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.nx || id.y >= params.ny) {
        return;
    }
    let c = id.y * params.nx + id.x;
    let old = mg[params.scalars + (1u - params.slot)];
    let rz = mg[params.scalars + params.slot];
    let z = mg[params.z + c];
    // Written so that a NaN restarts too.
    if (params.flag != 0u || !(rz > 0.0 && rz < old)) {
        mg[params.d + c] = z;
        return;
    }
    mg[params.d + c] = z + (rz / old) * mg[params.d + c];
}
