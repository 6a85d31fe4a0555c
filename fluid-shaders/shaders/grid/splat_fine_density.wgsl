// One invocation per cell (i, j) of the finer density (params.factor cells per cell along
// each axis): splat_fine_dye for one value, the splats' density (twin of
// fluid-cpu/src/kernels/fine_density.rs).
// #include solid
// #include splat_weight

@group(0) @binding(2) var<uniform> params: DyeParams;
@group(0) @binding(3) var<storage, read> splats: array<SplatGpu>;
@group(1) @binding(0) var<storage, read_write> density: array<f32>;
@group(1) @binding(1) var<storage, read> solid: array<f32>;
@group(1) @binding(2) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(3) var<storage, read> v_faces: array<vec2<f32>>;

@compute @workgroup_size(WG_X, WG_Y)
fn splat_fine_density(@builtin(global_invocation_id) id: vec3<u32>) {
    let f = max(params.factor, 1u);
    let fx = grid.nx * f;
    let i = id.x;
    let j = id.y;
    if (i >= fx || j >= grid.ny * f) {
        return;
    }
    let cell = j * fx + i;
    var open = 1.0;
    if (grid.solids != 0u) {
        if (solid[ci(i / f, j / f)] == 1.0) {
            density[cell] = 0.0;
        }
        open = cell_open(i / f, j / f);
    }
    if (inputs.splat_count == 0u) {
        return;
    }
    let scale = f32(f);
    let p = vec2<f32>(((f32(i) + 0.5) / scale) * grid.h, ((f32(j) + 0.5) / scale) * grid.h);
    var d = 0.0;
    for (var k = 0u; k < inputs.splat_count; k++) {
        d += weight(splats[k], p) * splats[k].density;
    }
    d *= open;
    if (d != 0.0) {
        density[cell] += d;
    }
}
