// One invocation: particle i's double density relaxation displacement, summed over its
// neighbour pairs with both particles' pressures (twin of
// fluid-cpu/src/kernels/particle_relax.rs).
// #include particles

@group(0) @binding(2) var<uniform> params: RelaxParams;
@group(1) @binding(0) var<storage, read> position: array<vec2<f32>>;
@group(1) @binding(1) var<storage, read> pressure: array<vec2<f32>>;
@group(1) @binding(2) var<storage, read> cell: array<u32>;
@group(1) @binding(3) var<storage, read> starts: array<u32>;
@group(1) @binding(4) var<storage, read_write> relaxed: array<vec2<f32>>;

@compute @workgroup_size(256)
fn particle_relax(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.count) {
        return;
    }
    let dt = inputs.dt * params.dt_scale;
    let half_dt2 = 0.5 * dt * dt;
    let xi = position[i];
    let pi = pressure[i];
    var dx = vec2<f32>(0.0, 0.0);
    let nb = neighbour_box(cell[i], params.cells_x, params.cells_y);
    for (var y = nb.z; y <= nb.w; y++) {
        let row = y * params.cells_x;
        let end = starts[row + nb.y + 1u];
        for (var j = starts[row + nb.x]; j < end; j++) {
            if (j == i) {
                continue;
            }
            let xj = position[j];
            let pj = pressure[j];
            let r = vec2<f32>(xj.x - xi.x, xj.y - xi.y);
            let d2 = r.x * r.x + r.y * r.y;
            if (d2 >= params.radius_sq) {
                continue;
            }
            let d = sqrt(d2);
            let n = direction(r, d, i, j);
            let a = 1.0 - d * params.inv_radius;
            let push = half_dt2 * ((pi.x + pj.x) * a + (pi.y + pj.y) * (a * a));
            dx.x -= push * n.x;
            dx.y -= push * n.y;
        }
    }
    relaxed[i] = vec2<f32>(xi.x + dx.x, xi.y + dx.y);
}
