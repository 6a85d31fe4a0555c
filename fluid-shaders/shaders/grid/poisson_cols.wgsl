// #include filter
// One invocation: cell (x, y) of the column pass of the separable Poisson filter (twin of
// fluid-cpu/src/kernels/poisson_cols.rs): out = sum_i sum_t tap_i[t] * tmp_i(x, fold(y + t - k)),
// written into q (mode 0), the pressure (mode 1) or the pressure plus q (mode 2).

@group(0) @binding(2) var<uniform> params: FilterParams;
@group(1) @binding(0) var<storage, read_write> mg: array<f32>;
@group(1) @binding(1) var<storage, read_write> pressure: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn poisson_cols(@builtin(global_invocation_id) id: vec3<u32>) {
    let x = id.x;
    let y = id.y;
    if (x >= grid.nx || y >= grid.ny) {
        return;
    }
    let cells = grid.nx * grid.ny;
    var acc = 0.0;
    for (var i = 0u; i < params.rank; i++) {
        let bank = params.bank + i * MAX_TAPS;
        let tmp = params.tmp + i * cells;
        for (var t = 0u; t <= 2u * params.k; t++) {
            let ys = fold(i32(y) + i32(t) - i32(params.k), i32(grid.ny), py());
            acc += mg[bank + t] * mg[tmp + ys * grid.nx + x];
        }
    }
    let c = y * grid.nx + x;
    if (params.mode == 0u) {
        mg[params.q + c] = acc;
    } else if (params.mode == 1u) {
        pressure[c] = acc;
    } else {
        pressure[c] = acc + mg[params.q + c];
    }
}
