// One invocation: particle i's springs after the substep's advance, proposed for the confirm
// pass (twin of fluid-cpu/src/kernels/particle_spring_propose.rs). Each held spring whose pair
// lies within h yields: its rest length L follows the distance r at the plasticity once r
// leaves L (1 +- yield ratio); one whose L passes h is dropped. Then each neighbour within h it
// holds none with gets one of rest length h (yielded the same way), in slot order, while the
// list has room. Lists are indexed by stable id, two words an entry.
// #include particles

@group(0) @binding(2) var<uniform> params: SpringParams;
@group(1) @binding(0) var<storage, read> position: array<vec2<f32>>;
@group(1) @binding(1) var<storage, read> cell: array<u32>;
@group(1) @binding(2) var<storage, read> starts: array<u32>;
@group(1) @binding(3) var<storage, read> ids: array<u32>;
@group(1) @binding(4) var<storage, read> slots: array<u32>;
@group(1) @binding(5) var<storage, read> springs: array<u32>;
@group(1) @binding(6) var<storage, read_write> proposals: array<u32>;

fn yielded(rest: f32, r: f32, dt: f32) -> f32 {
    let tolerance = params.yield_ratio * rest;
    if (r > rest + tolerance) {
        return rest + dt * params.plasticity * (r - rest - tolerance);
    }
    if (r < rest - tolerance) {
        return rest - dt * params.plasticity * (rest - tolerance - r);
    }
    return rest;
}

@compute @workgroup_size(256)
fn particle_spring_propose(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.count) {
        return;
    }
    let dt = inputs.dt * params.dt_scale;
    let xi = position[i];
    let base = 2u * ids[i] * params.max_springs;
    var n = 0u;
    for (var k = 0u; k < params.max_springs; k++) {
        let b = springs[base + 2u * k];
        if (b == NO_SPRING) {
            break;
        }
        var rest = bitcast<f32>(springs[base + 2u * k + 1u]);
        let xj = position[slots[b]];
        let r = vec2<f32>(xj.x - xi.x, xj.y - xi.y);
        let d = sqrt(r.x * r.x + r.y * r.y);
        if (d < params.radius) {
            rest = yielded(rest, d, dt);
        }
        if (rest > params.radius) {
            continue;
        }
        proposals[base + 2u * n] = b;
        proposals[base + 2u * n + 1u] = bitcast<u32>(rest);
        n++;
    }
    let nb = neighbour_box(cell[i], params.cells_x, params.cells_y);
    for (var y = nb.z; y <= nb.w && n < params.max_springs; y++) {
        let row = y * params.cells_x;
        let end = starts[row + nb.y + 1u];
        for (var j = starts[row + nb.x]; j < end && n < params.max_springs; j++) {
            if (j == i) {
                continue;
            }
            let xj = position[j];
            let r = vec2<f32>(xj.x - xi.x, xj.y - xi.y);
            let d2 = r.x * r.x + r.y * r.y;
            if (d2 >= params.radius_sq) {
                continue;
            }
            let b = ids[j];
            var held = false;
            for (var k = 0u; k < n; k++) {
                if (proposals[base + 2u * k] == b) {
                    held = true;
                    break;
                }
            }
            if (held) {
                continue;
            }
            proposals[base + 2u * n] = b;
            proposals[base + 2u * n + 1u] = bitcast<u32>(yielded(params.radius, sqrt(d2), dt));
            n++;
        }
    }
    for (var k = n; k < params.max_springs; k++) {
        proposals[base + 2u * k] = NO_SPRING;
        proposals[base + 2u * k + 1u] = 0u;
    }
}
