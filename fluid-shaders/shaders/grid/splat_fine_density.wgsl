// One invocation per cell (i, j) of the finer density (params.factor cells per cell along
// each axis): splat_fine_dye for one value, the splats' density (twin of
// fluid-cpu/src/kernels/fine_density.rs). Splats are binned per workgroup (splat_bins).
// #include solid
// #include splat_weight
// #include splat_bins

@group(0) @binding(2) var<uniform> params: DyeParams;
@group(0) @binding(3) var<storage, read> splats: array<SplatGpu>;
@group(1) @binding(0) var<storage, read_write> density: array<f32>;
@group(1) @binding(1) var<storage, read> solid: array<f32>;
@group(1) @binding(2) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(3) var<storage, read> v_faces: array<vec2<f32>>;

@compute @workgroup_size(WG_X, WG_Y)
fn splat_fine_density(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let f = max(params.factor, 1u);
    let fx = grid.nx * f;
    let i = id.x;
    let j = id.y;
    let inside = i < fx && j < grid.ny * f;
    let cell = j * fx + i;
    var open = 1.0;
    if (inside && grid.solids != 0u) {
        if (solid[ci(i / f, j / f)] == 1.0) {
            density[cell] = 0.0;
        }
        open = cell_open(i / f, j / f);
    }
    if (inputs.records == 0u) {
        return;
    }
    let scale = f32(f);
    let p = vec2<f32>(((f32(i) + 0.5) / scale) * grid.h, ((f32(j) + 0.5) / scale) * grid.h);
    var c = 0.0;
    for (var base = 0u; base < inputs.records; base += SPLAT_CHUNK) {
        let n = bin_splats(base, lane, wg.xy, grid.h / scale);
        for (var q = 0u; q < n; q++) {
            let s = splats[chunk_hits[q]];
            c += weight(s, p) * s.density;
        }
        workgroupBarrier();
    }
    c *= open;
    if (inside && c != 0.0) {
        density[cell] += c;
    }
}
