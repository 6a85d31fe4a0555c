// One invocation: the liquid's smoothed density at picture cell (i, j)'s centre, over the
// particles within the drawing radius, found through the sort without moving them (twin of
// fluid-cpu/src/kernels/particle_draw.rs).
// #include particles

@group(0) @binding(2) var<uniform> params: DrawParams;
@group(1) @binding(0) var<storage, read> position: array<vec2<f32>>;
@group(1) @binding(1) var<storage, read> order: array<u32>;
@group(1) @binding(2) var<storage, read> starts: array<u32>;
@group(1) @binding(3) var<storage, read_write> density: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn particle_draw(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    let x = vec2<f32>((f32(i) + 0.5) * grid.h, (f32(j) + 0.5) * grid.h);
    let nb = neighbour_box(cell_of(x, params.inv_cell, params.cells_x, params.cells_y), params.cells_x, params.cells_y);
    var sum = 0.0;
    for (var y = nb.z; y <= nb.w; y++) {
        let row = y * params.cells_x;
        let end = starts[row + nb.y + 1u];
        for (var t = starts[row + nb.x]; t < end; t++) {
            let p = position[order[t]];
            let r = vec2<f32>(p.x - x.x, p.y - x.y);
            let d2 = r.x * r.x + r.y * r.y;
            if (d2 < params.radius_sq) {
                let w = 1.0 - sqrt(d2) * params.inv_radius;
                sum += w * w;
            }
        }
    }
    density[j * grid.nx + i] = sum * params.scale;
}
