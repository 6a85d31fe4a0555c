// One invocation copies one vec4 (16 bytes): the device's achievable streaming bandwidth, the
// yardstick `fluid bench` divides effective bandwidth by. Not a simulation kernel.

@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;

@compute @workgroup_size(256)
fn bandwidth(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let k = id.x + id.y * groups.x * 256u;
    if (k < arrayLength(&dst)) {
        dst[k] = src[k];
    }
}
