// One invocation: hash cell c's run of particle indices sorted ascending (insertion sort: a
// run holds a few particles), which makes the counting sort stable (twin of
// fluid-cpu/src/kernels/particle_order.rs).
// #include particles

@group(0) @binding(2) var<uniform> params: HashParams;
@group(1) @binding(0) var<storage, read> starts: array<u32>;
@group(1) @binding(1) var<storage, read_write> order: array<u32>;

@compute @workgroup_size(256)
fn particle_order(@builtin(global_invocation_id) id: vec3<u32>) {
    let c = id.x;
    if (c >= params.cells_x * params.cells_y) {
        return;
    }
    let a = starts[c];
    let b = starts[c + 1u];
    for (var k = a + 1u; k < b; k++) {
        let x = order[k];
        var m = k;
        while (m > a && order[m - 1u] > x) {
            order[m] = order[m - 1u];
            m -= 1u;
        }
        order[m] = x;
    }
}
