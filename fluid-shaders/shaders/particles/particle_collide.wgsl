// One invocation: particle i put back on its container's edge if past it, its velocity from
// its position change, outward part removed, friction and anti-stick applied, and pulled
// toward a wall within reach of stickiness by dt k_stick d (1 - d / reach) (twin of
// fluid-cpu/src/kernels/particle_collide.rs).
// #include particles

@group(0) @binding(2) var<uniform> params: CollideParams;
@group(1) @binding(0) var<storage, read_write> position: array<vec2<f32>>;
@group(1) @binding(1) var<storage, read> previous: array<vec2<f32>>;
@group(1) @binding(2) var<storage, read_write> velocity: array<vec2<f32>>;

// The speed toward a wall at distance d: dt k_stick d (1 - d / reach) within reach, else 0.
fn stick_pull(d: f32, dt: f32) -> f32 {
    if (d >= params.stick_distance) {
        return 0.0;
    }
    return dt * params.stickiness * d * (1.0 - d / params.stick_distance);
}

@compute @workgroup_size(256)
fn particle_collide(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.count) {
        return;
    }
    let dt = inputs.dt * params.dt_scale;
    var x = position[i];
    let prev = previous[i];
    if (params.shape == SHAPE_BOX) {
        var side = vec2<i32>(0, 0);
        for (var a = 0; a < 2; a++) {
            if (x[a] < params.lo[a]) {
                x[a] = params.lo[a];
                side[a] = -1;
            } else if (x[a] > params.hi[a]) {
                x[a] = params.hi[a];
                side[a] = 1;
            }
        }
        var v = vec2<f32>((x.x - prev.x) / dt, (x.y - prev.y) / dt);
        for (var a = 0; a < 2; a++) {
            let b = 1 - a;
            if (side[a] < 0) {
                v[a] = max(v[a], 0.0) + params.anti_stick;
                v[b] *= 1.0 - params.friction;
            } else if (side[a] > 0) {
                v[a] = min(v[a], 0.0) - params.anti_stick;
                v[b] *= 1.0 - params.friction;
            }
        }
        if (params.stickiness > 0.0) {
            for (var a = 0; a < 2; a++) {
                v[a] -= stick_pull(x[a] - params.lo[a], dt);
                v[a] += stick_pull(params.hi[a] - x[a], dt);
            }
        }
        position[i] = x;
        velocity[i] = v;
        return;
    }
    let c = params.lo;
    let radius = params.hi.x;
    let r = vec2<f32>(x.x - c.x, x.y - c.y);
    let l2 = r.x * r.x + r.y * r.y;
    if (l2 <= radius * radius) {
        var v = vec2<f32>((x.x - prev.x) / dt, (x.y - prev.y) / dt);
        if (params.stickiness > 0.0 && l2 > 0.0) {
            let l = sqrt(l2);
            let pull = stick_pull(radius - l, dt);
            v = vec2<f32>(v.x + pull * r.x / l, v.y + pull * r.y / l);
        }
        velocity[i] = v;
        return;
    }
    let l = sqrt(l2);
    let n = vec2<f32>(r.x / l, r.y / l);
    x = vec2<f32>(c.x + n.x * radius, c.y + n.y * radius);
    var v = vec2<f32>((x.x - prev.x) / dt, (x.y - prev.y) / dt);
    let vn = v.x * n.x + v.y * n.y;
    let t = vec2<f32>(v.x - vn * n.x, v.y - vn * n.y);
    let out = max(vn, 0.0);
    v = vec2<f32>(
        v.x - out * n.x - params.friction * t.x - params.anti_stick * n.x,
        v.y - out * n.y - params.friction * t.y - params.anti_stick * n.y,
    );
    position[i] = x;
    velocity[i] = v;
}
