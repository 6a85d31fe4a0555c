// #include velocity
// #include fine
// One invocation per cell (i, j) of the finer dye (params.factor cells per cell along each
// axis): trace its centre back along the velocity, in the velocity grid's cell units as
// advect_cells does, and sample the fine dye there, bilinear on the fine lattice, with the
// dye's dissipation; near an inflow side blend toward what it carries (twin of
// fluid-cpu/src/kernels/advect_fine_dye.rs).

@group(0) @binding(2) var<uniform> params: DyeParams;
@group(1) @binding(0) var<storage, read> u: array<f32>;
@group(1) @binding(1) var<storage, read> v: array<f32>;
@group(1) @binding(2) var<storage, read> dye: array<vec4<f32>>;
@group(1) @binding(3) var<storage, read_write> dye_out: array<vec4<f32>>;

@compute @workgroup_size(WG_X, WG_Y)
fn advect_fine_dye(@builtin(global_invocation_id) id: vec3<u32>) {
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
    let a = dye[s.i00] + (dye[s.i10] - dye[s.i00]) * s.tx;
    let bb = dye[s.i01] + (dye[s.i11] - dye[s.i01]) * s.tx;
    let c = (a + (bb - a) * s.ty) * decay;
    let inflow = inflow_weight(b);
    let band = in_band(inflow.k, b);
    dye_out[j * fx + i] = select(c, c + inflow.w * (band * grid.side_dye[inflow.k] * decay - c), inflow.w > 0.0);
}
