// One invocation: particle i moved by its half of each of its springs' displacements,
// D = dt^2 k (1 - L/h)(L - r) along the pair (Clavet et al. 2005, algorithm 2); its partner
// takes the other half in its own invocation (twin of
// fluid-cpu/src/kernels/particle_spring_apply.rs).
// #include particles

@group(0) @binding(2) var<uniform> params: SpringParams;
@group(1) @binding(0) var<storage, read> position: array<vec2<f32>>;
@group(1) @binding(1) var<storage, read> ids: array<u32>;
@group(1) @binding(2) var<storage, read> slots: array<u32>;
@group(1) @binding(3) var<storage, read> springs: array<u32>;
@group(1) @binding(4) var<storage, read_write> moved: array<vec2<f32>>;

@compute @workgroup_size(256)
fn particle_spring_apply(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.count) {
        return;
    }
    let dt = inputs.dt * params.dt_scale;
    let half_k = 0.5 * dt * dt * params.stiffness;
    let xi = position[i];
    let base = 2u * ids[i] * params.max_springs;
    var dx = vec2<f32>(0.0, 0.0);
    for (var k = 0u; k < params.max_springs; k++) {
        let b = springs[base + 2u * k];
        if (b == NO_SPRING) {
            break;
        }
        let rest = bitcast<f32>(springs[base + 2u * k + 1u]);
        let j = slots[b];
        let xj = position[j];
        let r = vec2<f32>(xj.x - xi.x, xj.y - xi.y);
        let d = sqrt(r.x * r.x + r.y * r.y);
        let n = direction(r, d, i, j);
        let push = half_k * (1.0 - rest / params.radius) * (rest - d);
        dx.x -= push * n.x;
        dx.y -= push * n.y;
    }
    moved[i] = vec2<f32>(xi.x + dx.x, xi.y + dx.y);
}
