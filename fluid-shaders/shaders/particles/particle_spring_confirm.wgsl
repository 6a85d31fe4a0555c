// One invocation: particle id a keeps the springs it proposed whose partner proposed it too,
// so a spring is held by both of its pair or by neither, with one rest length (twin of
// fluid-cpu/src/kernels/particle_spring_confirm.rs).
// #include particles

@group(0) @binding(2) var<uniform> params: SpringParams;
@group(1) @binding(0) var<storage, read> proposals: array<u32>;
@group(1) @binding(1) var<storage, read_write> springs: array<u32>;

@compute @workgroup_size(256)
fn particle_spring_confirm(@builtin(global_invocation_id) id: vec3<u32>) {
    let a = id.x;
    if (a >= params.count) {
        return;
    }
    let stride = 2u * params.max_springs;
    let base = a * stride;
    var n = 0u;
    for (var k = 0u; k < params.max_springs; k++) {
        let b = proposals[base + 2u * k];
        if (b == NO_SPRING) {
            break;
        }
        let other = b * stride;
        var mutual = false;
        for (var m = 0u; m < params.max_springs; m++) {
            let c = proposals[other + 2u * m];
            if (c == NO_SPRING) {
                break;
            }
            if (c == a) {
                mutual = true;
                break;
            }
        }
        if (mutual) {
            springs[base + 2u * n] = b;
            springs[base + 2u * n + 1u] = proposals[base + 2u * k + 1u];
            n++;
        }
    }
    for (var k = n; k < params.max_springs; k++) {
        springs[base + 2u * k] = NO_SPRING;
        springs[base + 2u * k + 1u] = 0u;
    }
}
