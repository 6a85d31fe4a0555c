// #include velocity
// #include fine
// One invocation per cell (i, j) of the finer density (params.factor cells per cell along
// each axis): advect_fine_dye's trace and sample, for one value (twin of
// fluid-cpu/src/kernels/fine_density.rs).

@group(0) @binding(2) var<uniform> params: DyeParams;
@group(1) @binding(0) var<storage, read> u: array<f32>;
@group(1) @binding(1) var<storage, read> v: array<f32>;
@group(1) @binding(2) var<storage, read> density: array<f32>;
@group(1) @binding(3) var<storage, read_write> density_out: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn advect_fine_density(@builtin(global_invocation_id) id: vec3<u32>) {
    let f = max(params.factor, 1u);
    let fx = grid.nx * f;
    let i = id.x;
    let j = id.y;
    if (i >= fx || j >= grid.ny * f) {
        return;
    }
    let b = fine_backtrace(i, j, f, params.order);
    let s = fine_stencil(b, f);
    let decay = exp(-params.dissipation * inputs.dt);
    let d = lerp2(density[s.i00], density[s.i10], density[s.i01], density[s.i11], s.tx, s.ty) * decay;
    let inflow = inflow_weight(b);
    let band = in_band(inflow.k, b);
    density_out[j * fx + i] = select(d, d + inflow.w * (band * grid.side_carry[inflow.k].x * decay - d), inflow.w > 0.0);
}
