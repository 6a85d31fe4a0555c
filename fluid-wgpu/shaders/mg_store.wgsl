// One invocation: cell (i, j): the pressure from level 0's iterate (twin of
// fluid-cpu/src/kernels/mg_store.rs).

@group(0) @binding(2) var<uniform> params: MgParams;
@group(1) @binding(0) var<storage, read> mg: array<f32>;
@group(1) @binding(1) var<storage, read_write> pressure: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn mg_store(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.nx || id.y >= params.ny) {
        return;
    }
    let c = id.y * params.nx + id.x;
    pressure[c] = mg[params.p + c];
}
