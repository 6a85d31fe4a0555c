// One invocation: fine cell (i, j): p += the coarse correction interpolated bilinearly between
// cell centres, 9/16 parent, 3/16 each side neighbour, 1/16 diagonal (walls: the parent again;
// periodic axes wrap) (twin of fluid-cpu/src/kernels/mg_prolong.rs).

@group(0) @binding(2) var<uniform> params: MgParams;
@group(1) @binding(0) var<storage, read_write> mg: array<f32>;

fn beside(i: u32, c: u32, n: u32, periodic: bool) -> u32 {
    if ((i & 1u) == 0u) {
        if (c > 0u) {
            return c - 1u;
        }
        return select(c, n - 1u, periodic);
    }
    if (c + 1u < n) {
        return c + 1u;
    }
    return select(c, 0u, periodic);
}

fn e(x: u32, y: u32) -> f32 {
    return mg[params.cp + y * params.cnx + x];
}

@compute @workgroup_size(WG_X, WG_Y)
fn mg_prolong(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= params.nx || j >= params.ny) {
        return;
    }
    let ci = i / 2u;
    let cj = j / 2u;
    let ci2 = beside(i, ci, params.cnx, px());
    let cj2 = beside(j, cj, params.cny, py());
    let corr = 0.75 * (0.75 * e(ci, cj) + 0.25 * e(ci2, cj)) + 0.25 * (0.75 * e(ci, cj2) + 0.25 * e(ci2, cj2));
    let c = j * params.nx + i;
    mg[params.p + c] = mg[params.p + c] + corr;
}
