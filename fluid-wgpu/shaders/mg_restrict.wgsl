// #include multigrid
// One invocation: coarse cell (ci, cj): the fine level's residual b - A p summed over the
// cell's (up to four) children, in the order (0,0), (1,0), (0,1), (1,1), into the coarse b;
// the coarse p set to zero (twin of fluid-cpu/src/kernels/mg_restrict.rs).

@group(0) @binding(2) var<uniform> params: MgParams;
@group(1) @binding(0) var<storage, read_write> mg: array<f32>;

fn residual_at(i: u32, j: u32) -> f32 {
    let c = j * params.nx + i;
    let nb = level_neighbours(params.p, params.nx, params.ny, i, j);
    return mg[params.b + c] - (nb.n * mg[params.p + c] - nb.sum);
}

@compute @workgroup_size(WG_X, WG_Y)
fn mg_restrict(@builtin(global_invocation_id) id: vec3<u32>) {
    let ci = id.x;
    let cj = id.y;
    if (ci >= params.cnx || cj >= params.cny) {
        return;
    }
    var r = 0.0;
    for (var k = 0u; k < 4u; k++) {
        let i = 2u * ci + (k & 1u);
        let j = 2u * cj + (k >> 1u);
        if (i < params.nx && j < params.ny) {
            r += residual_at(i, j);
        }
    }
    let c = cj * params.cnx + ci;
    mg[params.cb + c] = r;
    mg[params.cp + c] = 0.0;
}
