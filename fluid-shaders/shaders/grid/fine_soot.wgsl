// One invocation per cell (i, j) of the finer density: what combustion added to its velocity
// cell's density_coarse since coarse_density (density_coarse − mean) added to it, so that the
// fine cells keep the coarse cells' mean (twin of fluid-cpu/src/kernels/fine_density.rs).

@group(0) @binding(2) var<uniform> params: DyeParams;
@group(1) @binding(0) var<storage, read_write> density: array<f32>;
@group(1) @binding(1) var<storage, read> density_coarse: array<f32>;
@group(1) @binding(2) var<storage, read> mean: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn fine_soot(@builtin(global_invocation_id) id: vec3<u32>) {
    let f = max(params.factor, 1u);
    let fx = grid.nx * f;
    let i = id.x;
    let j = id.y;
    if (i >= fx || j >= grid.ny * f) {
        return;
    }
    let c = ci(i / f, j / f);
    let add = density_coarse[c] - mean[c];
    if (add != 0.0) {
        density[j * fx + i] += add;
    }
}
