// One invocation: the combustion's divergence source at cell (i, j) taken from the
// projection's right-hand side, so that the projected velocity keeps that divergence (twin of
// fluid-cpu/src/kernels/expand.rs).

@group(1) @binding(0) var<storage, read> expansion: array<f32>;
@group(1) @binding(1) var<storage, read_write> divergence: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn expand(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    let c = ci(i, j);
    divergence[c] -= expansion[c];
}
