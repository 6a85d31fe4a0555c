// #include multigrid
// One invocation: fine cell (i, j): p += the coarse correction interpolated bilinearly between
// cell centres, 9/16 parent, 3/16 each side neighbour, 1/16 diagonal (walls: the parent again;
// periodic axes wrap) (twin of fluid-cpu/src/kernels/mg_prolong.rs).

@group(0) @binding(2) var<uniform> params: MgParams;
@group(1) @binding(0) var<storage, read_write> mg: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn mg_prolong(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.nx || id.y >= params.ny) {
        return;
    }
    prolong_cell(params.nx, params.p, params.cnx, params.cny, params.cp, id.x, id.y);
}
