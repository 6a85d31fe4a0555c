// #include multigrid
// One invocation: cell (i, j) of one level in one colour pass of red-black Gauss-Seidel
// (over-relaxed by omega), from the iterate at `p` into `tmp`; cells of the other colour are
// copied (twin of fluid-cpu/src/kernels/mg_smooth.rs).

@group(0) @binding(2) var<uniform> params: MgParams;
@group(1) @binding(0) var<storage, read_write> mg: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn mg_smooth(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= params.nx || j >= params.ny) {
        return;
    }
    let c = j * params.nx + i;
    let zero = params.zero_initial != 0u;
    let old = select(mg[params.p + c], 0.0, zero);
    if (((i + j) & 1u) != params.colour) {
        mg[params.tmp + c] = old;
        return;
    }
    var nb = level_neighbours(params.p, params.nx, params.ny, i, j);
    if (zero) {
        nb.sum = 0.0;
    }
    if (nb.n == 0.0) {
        mg[params.tmp + c] = old;
        return;
    }
    let pj = (nb.sum + mg[params.b + c]) / nb.n;
    mg[params.tmp + c] = old + params.omega * (pj - old);
}
