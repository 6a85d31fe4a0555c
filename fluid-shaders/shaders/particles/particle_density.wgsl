// One invocation: particle i's density and near-density over its neighbours, and from them its
// pressure and near-pressure (twin of fluid-cpu/src/kernels/particle_density.rs).
// #include particles

@group(0) @binding(2) var<uniform> params: DensityParams;
@group(1) @binding(0) var<storage, read> position: array<vec2<f32>>;
@group(1) @binding(1) var<storage, read> cell: array<u32>;
@group(1) @binding(2) var<storage, read> starts: array<u32>;
@group(1) @binding(3) var<storage, read_write> pressure: array<vec2<f32>>;

@compute @workgroup_size(256)
fn particle_density(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.count) {
        return;
    }
    let xi = position[i];
    var rho = 0.0;
    var near = 0.0;
    let nb = neighbour_box(cell[i], params.cells_x, params.cells_y);
    for (var y = nb.z; y <= nb.w; y++) {
        let row = y * params.cells_x;
        let end = starts[row + nb.y + 1u];
        for (var j = starts[row + nb.x]; j < end; j++) {
            if (j == i) {
                continue;
            }
            let xj = position[j];
            let r = vec2<f32>(xj.x - xi.x, xj.y - xi.y);
            let d2 = r.x * r.x + r.y * r.y;
            if (d2 >= params.radius_sq) {
                continue;
            }
            let a = 1.0 - sqrt(d2) * params.inv_radius;
            let a2 = a * a;
            rho += a2;
            near += a2 * a;
        }
    }
    pressure[i] = vec2<f32>(params.stiffness * (rho - params.rest_density), params.near_stiffness * near);
}
