// One invocation: the step's splats on particle i's velocity, as a pointer: each adds its
// falloff weight w times its velocity, and w times its `density` toward its centre (away
// from it when negative), world units per second (twin of
// fluid-cpu/src/kernels/particle_pointer.rs).
// #include particles
// #include splat_weight

@group(0) @binding(2) var<uniform> params: HashParams;
@group(0) @binding(3) var<storage, read> splats: array<SplatGpu>;
@group(1) @binding(0) var<storage, read> position: array<vec2<f32>>;
@group(1) @binding(1) var<storage, read_write> velocity: array<vec2<f32>>;

@compute @workgroup_size(256)
fn particle_pointer(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.count || inputs.records == 0u) {
        return;
    }
    let x = position[i];
    var v = velocity[i];
    for (var k = 0u; k < inputs.records; k++) {
        let s = splats[k];
        let w = weight(s, x);
        if (w > 0.0) {
            let r = vec2<f32>(s.center.x - x.x, s.center.y - x.y);
            let d = sqrt(r.x * r.x + r.y * r.y);
            var pull = vec2<f32>(0.0, 0.0);
            if (d > 0.0) {
                pull = vec2<f32>(r.x / d * s.density, r.y / d * s.density);
            }
            v = vec2<f32>(v.x + w * (s.velocity.x + pull.x), v.y + w * (s.velocity.y + pull.y));
        }
    }
    velocity[i] = v;
}
