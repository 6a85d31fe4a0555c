// #include velocity
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
    let fy = grid.ny * f;
    let i = id.x;
    let j = id.y;
    if (i >= fx || j >= fy) {
        return;
    }
    let dt = inputs.dt;
    let scale = f32(f);
    let p = vec2<f32>((f32(i) + 0.5) / scale, (f32(j) + 0.5) / scale);
    let b = backtrace(p, params.order, dt * grid.inv_h);
    let sx = stencil(b.x * scale - 0.5, fx, false, px());
    let sy = stencil(b.y * scale - 0.5, fy, false, py());
    let decay = exp(-params.dissipation * dt);
    let d00 = dye[sy.i0 * fx + sx.i0];
    let d10 = dye[sy.i0 * fx + sx.i1];
    let d01 = dye[sy.i1 * fx + sx.i0];
    let d11 = dye[sy.i1 * fx + sx.i1];
    let a = d00 + (d10 - d00) * sx.t;
    let bb = d01 + (d11 - d01) * sx.t;
    let c = (a + (bb - a) * sy.t) * decay;
    let inflow = inflow_weight(b);
    let band = in_band(inflow.k, b);
    dye_out[j * fx + i] = select(c, c + inflow.w * (band * grid.side_dye[inflow.k] * decay - c), inflow.w > 0.0);
}
