// One invocation: gravity and the viscosity impulses of particle i's approaching neighbours on
// its velocity, then its advanced position x + dt v (twin of
// fluid-cpu/src/kernels/particle_forces.rs).
// #include particles

@group(0) @binding(2) var<uniform> params: ViscosityParams;
@group(1) @binding(0) var<storage, read> position: array<vec2<f32>>;
@group(1) @binding(1) var<storage, read> velocity: array<vec2<f32>>;
@group(1) @binding(2) var<storage, read> cell: array<u32>;
@group(1) @binding(3) var<storage, read> starts: array<u32>;
@group(1) @binding(4) var<storage, read_write> advanced: array<vec2<f32>>;

@compute @workgroup_size(256)
fn particle_forces(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.count) {
        return;
    }
    let dt = inputs.dt * params.dt_scale;
    let xi = position[i];
    let vi = velocity[i];
    var dv = vec2<f32>(0.0, 0.0);
    let nb = neighbour_box(cell[i], params.cells_x, params.cells_y);
    for (var y = nb.z; y <= nb.w; y++) {
        let row = y * params.cells_x;
        let end = starts[row + nb.y + 1u];
        for (var j = starts[row + nb.x]; j < end; j++) {
            if (j == i) {
                continue;
            }
            let xj = position[j];
            let vj = velocity[j];
            let r = vec2<f32>(xj.x - xi.x, xj.y - xi.y);
            let d2 = r.x * r.x + r.y * r.y;
            if (d2 >= params.radius_sq) {
                continue;
            }
            let d = sqrt(d2);
            let n = direction(r, d, i, j);
            let u = (vi.x - vj.x) * n.x + (vi.y - vj.y) * n.y;
            if (u > 0.0) {
                let a = 1.0 - d * params.inv_radius;
                let half = 0.5 * (dt * a * (params.sigma * u + params.beta * u * u));
                dv.x -= half * n.x;
                dv.y -= half * n.y;
            }
        }
    }
    let v = vec2<f32>(vi.x + params.gravity.x * dt + dv.x, vi.y + params.gravity.y * dt + dv.y);
    advanced[i] = vec2<f32>(xi.x + dt * v.x, xi.y + dt * v.y);
}
