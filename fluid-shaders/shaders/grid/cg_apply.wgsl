// #include multigrid
// One invocation: cell (i, j) of level 0: q = A d in difference form, -sum (d_nbr - d) over
// the neighbours that are not walls, left, right, down, up (twin of
// fluid-cpu/src/kernels/cg_apply.rs: no rounding of d's magnitude enters q). With obstacles each
// neighbour is weighted by the open fraction of the face between.

@group(0) @binding(2) var<uniform> params: CgParams;
@group(1) @binding(0) var<storage, read_write> mg: array<f32>;
@group(1) @binding(1) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(2) var<storage, read> v_faces: array<vec2<f32>>;

@compute @workgroup_size(WG_X, WG_Y)
fn cg_apply(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    let nx = params.nx;
    let ny = params.ny;
    if (i >= nx || j >= ny) {
        return;
    }
    let c = j * nx + i;
    let d = params.d;
    let dc = mg[d + c];
    var sum = 0.0;
    let s = grid.solids != 0u;
    if (s) {
        // Past the box's edge d is zero, weighted by the side's edge_weight.
        let il = prev(i, nx, px());
        if (il != NONE) {
            sum += u_faces[ui_(i, j)].x * (mg[d + j * nx + u32(il)] - dc);
        } else {
            sum += edge_weight(LEFT) * (0.0 - dc);
        }
        let ir = next(i, nx, px());
        if (ir != NONE) {
            sum += u_faces[ui_(i + 1u, j)].x * (mg[d + j * nx + u32(ir)] - dc);
        } else {
            sum += edge_weight(RIGHT) * (0.0 - dc);
        }
        let jd = prev(j, ny, py());
        if (jd != NONE) {
            sum += v_faces[vi_(i, j)].x * (mg[d + u32(jd) * nx + i] - dc);
        } else {
            sum += edge_weight(BOTTOM) * (0.0 - dc);
        }
        let ju = next(j, ny, py());
        if (ju != NONE) {
            sum += v_faces[vi_(i, j + 1u)].x * (mg[d + u32(ju) * nx + i] - dc);
        } else {
            sum += edge_weight(TOP) * (0.0 - dc);
        }
        mg[params.q + c] = -sum;
        return;
    }
    let il = prev(i, nx, px());
    if (il != NONE) {
        sum += mg[d + j * nx + u32(il)] - dc;
    }
    let ir = next(i, nx, px());
    if (ir != NONE) {
        sum += mg[d + j * nx + u32(ir)] - dc;
    }
    let jd = prev(j, ny, py());
    if (jd != NONE) {
        sum += mg[d + u32(jd) * nx + i] - dc;
    }
    let ju = next(j, ny, py());
    if (ju != NONE) {
        sum += mg[d + u32(ju) * nx + i] - dc;
    }
    mg[params.q + c] = -sum;
}
