// #include multigrid
// #include multigrid_solid
// One invocation: cell (i, j) of one level in one colour pass of red-black Gauss-Seidel
// (over-relaxed by omega), from the iterate at `p` into `tmp`; cells of the other colour are
// copied (twin of fluid-cpu/src/kernels/mg_smooth.rs). With obstacles the stencil is weighted by
// the level's faces.

@group(0) @binding(2) var<uniform> params: MgParams;
@group(1) @binding(0) var<storage, read_write> mg: array<f32>;
@group(1) @binding(1) var<storage, read> mg_faces: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn mg_smooth(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.nx || id.y >= params.ny) {
        return;
    }
    let zero = params.zero_initial != 0u;
    if (grid.solids != 0u) {
        weighted_smooth_cell(params.nx, params.ny, params.b, faces_at(params.b), params.p, params.tmp, params.colour, zero, params.omega, id.x, id.y);
        return;
    }
    smooth_cell(params.nx, params.ny, params.b, params.p, params.tmp, params.colour, zero, params.omega, id.x, id.y);
}
