// #include multigrid
// One invocation: cell (i, j) of level 0: q = A d = n d - sum d_nbr (twin of
// fluid-cpu/src/kernels/cg_apply.rs).

@group(0) @binding(2) var<uniform> params: CgParams;
@group(1) @binding(0) var<storage, read_write> mg: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn cg_apply(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= params.nx || j >= params.ny) {
        return;
    }
    let c = j * params.nx + i;
    let nb = level_neighbours(params.d, params.nx, params.ny, i, j);
    mg[params.q + c] = nb.n * mg[params.d + c] - nb.sum;
}
