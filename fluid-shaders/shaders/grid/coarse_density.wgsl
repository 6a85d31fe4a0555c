// One invocation per velocity cell (i, j): the mean of the finer density's params.factor²
// cells inside it, into density_coarse (what the forces and combustion read) and into mean
// (kept so that fine_soot can tell what combustion added). Twin of
// fluid-cpu/src/kernels/fine_density.rs.

@group(0) @binding(2) var<uniform> params: DyeParams;
@group(1) @binding(0) var<storage, read> density: array<f32>;
@group(1) @binding(1) var<storage, read_write> density_coarse: array<f32>;
@group(1) @binding(2) var<storage, read_write> mean: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn coarse_density(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    let f = max(params.factor, 1u);
    let fx = grid.nx * f;
    var sum = 0.0;
    for (var b = 0u; b < f; b++) {
        let row = (j * f + b) * fx + i * f;
        for (var a = 0u; a < f; a++) {
            sum += density[row + a];
        }
    }
    let m = sum / f32(f * f);
    density_coarse[ci(i, j)] = m;
    mean[ci(i, j)] = m;
}
