// One invocation: particle i against the obstacles where they stand at the substep's end
// (twin of fluid-cpu/src/kernels/particle_solids.rs). Inside one, it is put onto its outline
// along the normal (central differences of the signed distance), its velocity follows the
// move, then relative to the solid's it loses any inward part and the friction's share of the
// tangential part (up to three moves, each along the normal where it stands, near a corner).
// Outside but within reach of stickiness, it is pulled toward the solid by
// dt k_stick d (1 - d / reach) (Clavet et al. 2005, section 5.3).
// #include particles
// #include obstacles

@group(0) @binding(2) var<uniform> params: SolidParams;
@group(1) @binding(0) var<storage, read> obstacles: array<vec4<f32>>;
@group(1) @binding(1) var<storage, read_write> position: array<vec2<f32>>;
@group(1) @binding(2) var<storage, read_write> velocity: array<vec2<f32>>;

// The outward normal of the obstacle at row `at` (placed at q) at x: central differences of
// its signed distance, or +y where they vanish.
fn normal(at: u32, q: Placed, x: vec2<f32>) -> vec2<f32> {
    let e = params.eps;
    let gx = distance_to(at, q, vec2<f32>(x.x + e, x.y)) - distance_to(at, q, vec2<f32>(x.x - e, x.y));
    let gy = distance_to(at, q, vec2<f32>(x.x, x.y + e)) - distance_to(at, q, vec2<f32>(x.x, x.y - e));
    let g = sqrt(gx * gx + gy * gy);
    if (g > 0.0) {
        return vec2<f32>(gx / g, gy / g);
    }
    return vec2<f32>(0.0, 1.0);
}

@compute @workgroup_size(256)
fn particle_solids(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.count) {
        return;
    }
    exact_within = params.margin;
    let dt = inputs.dt * params.dt_scale;
    let t = inputs.time + inputs.dt * params.t_scale;
    var x = position[i];
    let near = nearest(x, t);
    if (!near.found || !(near.d < 0.0 || near.d < params.stick_distance)) {
        return;
    }
    let q = placed(near.at, t);
    var n = normal(near.at, q, x);
    var v = velocity[i];
    if (near.d < 0.0) {
        // Along the normal, and again (up to three moves) where a corner's normal left it short.
        var d = near.d;
        for (var k = 0; k < 3 && d < 0.0; k++) {
            if (k > 0) {
                n = normal(near.at, q, x);
            }
            x = vec2<f32>(x.x - d * n.x, x.y - d * n.y);
            v = vec2<f32>(v.x - d / dt * n.x, v.y - d / dt * n.y);
            d = distance_to(near.at, q, x);
        }
        let vs = solid_velocity(near.at, t, x);
        var rel = vec2<f32>(v.x - vs.x, v.y - vs.y);
        let vn = rel.x * n.x + rel.y * n.y;
        let inward = min(vn, 0.0);
        let tangent = vec2<f32>(rel.x - vn * n.x, rel.y - vn * n.y);
        rel = vec2<f32>(
            rel.x - inward * n.x - params.friction * tangent.x,
            rel.y - inward * n.y - params.friction * tangent.y,
        );
        v = vec2<f32>(vs.x + rel.x, vs.y + rel.y);
    } else {
        let d = near.d;
        let pull = dt * params.stickiness * d * (1.0 - d / params.stick_distance);
        v = vec2<f32>(v.x - pull * n.x, v.y - pull * n.y);
    }
    position[i] = x;
    velocity[i] = v;
}
