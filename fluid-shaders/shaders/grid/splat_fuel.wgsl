// One invocation: add the fuel of every splat of the step to cell (i, j), weighted by the
// splat's falloff there; with obstacles the cell receives its open part. Cells that receive
// nothing are left unwritten. A kernel of its own: with fuel the `splat` kernel would bind
// more storage buffers than portable devices allow (twin of `run_fuel` in
// fluid-cpu/src/kernels/splat.rs). Splats are binned per workgroup (splat_bins).
// #include solid
// #include splat_weight
// #include splat_bins

@group(0) @binding(3) var<storage, read> splats: array<SplatGpu>;
@group(1) @binding(0) var<storage, read_write> fuel: array<f32>;
@group(1) @binding(1) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(2) var<storage, read> v_faces: array<vec2<f32>>;

@compute @workgroup_size(WG_X, WG_Y)
fn splat_fuel(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    if (inputs.records == 0u) {
        return;
    }
    let i = id.x;
    let j = id.y;
    let p = vec2<f32>((f32(i) + 0.5) * grid.h, (f32(j) + 0.5) * grid.h);
    var f = 0.0;
    for (var base = 0u; base < inputs.records; base += SPLAT_CHUNK) {
        let n = bin_splats(base, lane, wg.xy, grid.h);
        for (var q = 0u; q < n; q++) {
            let s = splats[chunk_hits[q]];
            f += weight(s, p) * s.fuel;
        }
        workgroupBarrier();
    }
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    if (grid.solids != 0u) {
        f *= cell_open(i, j);
    }
    if (f != 0.0) {
        fuel[ci(i, j)] += f;
    }
}
