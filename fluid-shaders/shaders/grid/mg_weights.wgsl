// One invocation: cell (i, j) of a multigrid level: the open fractions of its right and top
// faces, the weights of the level's stencil with obstacles (twin of the multigrid paths in
// fluid-cpu/src/kernels/solid.rs). Mode 0 (colour 0): level 0 from the grid's faces. Mode 1:
// a coarse level (cnx x cny, b at cb) from the finer one (nx x ny, b at b): a coarse face's
// weight is the mean of the fine faces it covers (one where an odd side leaves one child).
// Weights of a level whose b starts at b live at 2 (b / 3): right faces, then top faces.

@group(0) @binding(2) var<uniform> params: MgParams;
@group(1) @binding(0) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(1) var<storage, read> v_faces: array<vec2<f32>>;
@group(1) @binding(2) var<storage, read_write> mg_faces: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn mg_weights(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (params.colour == 0u) {
        if (i >= params.nx || j >= params.ny) {
            return;
        }
        let w = 2u * (params.b / 3u);
        let c = j * params.nx + i;
        mg_faces[w + c] = u_faces[ui_(i + 1u, j)].x;
        mg_faces[w + params.nx * params.ny + c] = v_faces[vi_(i, j + 1u)].x;
        return;
    }
    if (i >= params.cnx || j >= params.cny) {
        return;
    }
    let nx = params.nx;
    let ny = params.ny;
    let fine = 2u * (params.b / 3u);
    let coarse = 2u * (params.cb / 3u);
    let fine_top = fine + nx * ny;
    // The right face: the children's column 2i + 1 (2i where an odd side leaves none), rows 2j
    // and 2j + 1 where it exists.
    let fi = min(2u * i + 1u, nx - 1u);
    let j0 = 2u * j;
    var right = mg_faces[fine + j0 * nx + fi];
    if (j0 + 1u < ny) {
        right = 0.5 * (right + mg_faces[fine + (j0 + 1u) * nx + fi]);
    }
    let fj = min(2u * j + 1u, ny - 1u);
    let i0 = 2u * i;
    var top = mg_faces[fine_top + fj * nx + i0];
    if (i0 + 1u < nx) {
        top = 0.5 * (top + mg_faces[fine_top + fj * nx + i0 + 1u]);
    }
    let c = j * params.cnx + i;
    mg_faces[coarse + c] = right;
    mg_faces[coarse + params.cnx * params.cny + c] = top;
}
