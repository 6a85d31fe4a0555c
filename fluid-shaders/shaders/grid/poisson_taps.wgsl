// One invocation: write up to eight Poisson-filter taps into the packed buffer (setup; twin of
// fluid-cpu/src/kernels/poisson_taps.rs).

@group(0) @binding(2) var<uniform> params: TapsParams;
@group(1) @binding(0) var<storage, read_write> mg: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn poisson_taps(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x != 0u || id.y != 0u) {
        return;
    }
    for (var t = 0u; t < min(params.count, 8u); t++) {
        mg[params.offset + t] = params.taps[t / 4u][t % 4u];
    }
}
