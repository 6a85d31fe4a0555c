// #include multigrid
// #include multigrid_solid
// One invocation: coarse cell (ci, cj): the fine level's residual b - A p summed over the
// cell's (up to four) children, in the order (0,0), (1,0), (0,1), (1,1), into the coarse b;
// the coarse p set to zero (twin of fluid-cpu/src/kernels/mg_restrict.rs). With obstacles the
// residual is that of the level's weighted stencil.

@group(0) @binding(2) var<uniform> params: MgParams;
@group(1) @binding(0) var<storage, read_write> mg: array<f32>;
@group(1) @binding(1) var<storage, read> mg_faces: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn mg_restrict(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.cnx || id.y >= params.cny) {
        return;
    }
    if (grid.solids != 0u) {
        weighted_restrict_cell(params.nx, params.ny, params.b, faces_at(params.b), params.p, params.cnx, params.cb, params.cp, id.x, id.y);
        return;
    }
    restrict_cell(params.nx, params.ny, params.b, params.p, params.cnx, params.cb, params.cp, id.x, id.y);
}
