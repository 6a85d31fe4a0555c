// #include filter
// One invocation: cell (x, y) of the row pass of the separable Poisson filter (twin of
// fluid-cpu/src/kernels/poisson_rows.rs): for each of `rank` filters,
// tmp_i(x, y) = sum_t tap_i[t] * src(fold(x + t - k), y), src = pressure (mode 0) or
// b = -h^2 div / dt (mode 1).

@group(0) @binding(2) var<uniform> params: FilterParams;
@group(1) @binding(0) var<storage, read> pressure: array<f32>;
@group(1) @binding(1) var<storage, read> divergence: array<f32>;
@group(1) @binding(2) var<storage, read_write> mg: array<f32>;

fn src(c: u32) -> f32 {
    if (params.mode == 0u) {
        return pressure[c];
    }
    return -grid.h * grid.h / inputs.dt * divergence[c];
}

@compute @workgroup_size(WG_X, WG_Y)
fn poisson_rows(@builtin(global_invocation_id) id: vec3<u32>) {
    let x = id.x;
    let y = id.y;
    if (x >= grid.nx || y >= grid.ny) {
        return;
    }
    let cells = grid.nx * grid.ny;
    for (var i = 0u; i < params.rank; i++) {
        let bank = params.bank + i * MAX_TAPS;
        var acc = 0.0;
        for (var t = 0u; t <= 2u * params.k; t++) {
            let xs = fold(i32(x) + i32(t) - i32(params.k), i32(grid.nx), px());
            acc += mg[bank + t] * src(y * grid.nx + xs);
        }
        mg[params.tmp + i * cells + y * grid.nx + x] = acc;
    }
}
