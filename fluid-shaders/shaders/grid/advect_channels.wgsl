// #include velocity
// #include fine
// One invocation per cell (i, j) of a lattice params.factor times finer than the velocity's
// along each axis (1: the velocity's cells): trace its centre back along the velocity, in
// the velocity grid's cell units, once, and sample there each channel the dispatch carries
// (two scalars q0, q1 and an RGBA one, by params.channels), each with its dissipation toward
// its ambient value. Near an inflow side the ghost past it holds what the inflow carries of
// the channel (params.*_inflow): a point traced back within half a cell of the side or beyond
// blends toward it (twin of fluid-cpu/src/kernels/advect_channels.rs).

@group(0) @binding(2) var<uniform> params: ChannelParams;
@group(1) @binding(0) var<storage, read> u: array<f32>;
@group(1) @binding(1) var<storage, read> v: array<f32>;
@group(1) @binding(2) var<storage, read> q0: array<f32>;
@group(1) @binding(3) var<storage, read> q1: array<f32>;
@group(1) @binding(4) var<storage, read> rgba: array<vec4<f32>>;
@group(1) @binding(5) var<storage, read_write> q0_out: array<f32>;
@group(1) @binding(6) var<storage, read_write> q1_out: array<f32>;
@group(1) @binding(7) var<storage, read_write> rgba_out: array<vec4<f32>>;

// CHANNEL_* and INFLOW_* are in params.wgsl.

// What a scalar channel's ghost past inflow side k holds at b.
fn ghost(mode: u32, k: u32, band: f32, ambient: f32) -> f32 {
    let carry = grid.side_carry[k];
    if (mode == INFLOW_SMOKE) {
        return band * carry.x;
    }
    if (mode == INFLOW_HEAT) {
        return carry.y;
    }
    return ambient;
}

// One scalar channel's value: sampled x relaxed toward ambient, blended toward the ghost
// (the blend only near an inflow side: elsewhere the branch is skipped workgroup-wide).
fn advected(x: f32, rate: f32, ambient: f32, mode: u32, inflow: Carried, band: f32) -> f32 {
    let decay = exp(-rate * inputs.dt);
    var q = ambient + (x - ambient) * decay;
    if (inflow.w > 0.0) {
        let goal = ambient + (ghost(mode, inflow.k, band, ambient) - ambient) * decay;
        q = q + inflow.w * (goal - q);
    }
    return q;
}

@compute @workgroup_size(WG_X, WG_Y)
fn advect_channels(@builtin(global_invocation_id) id: vec3<u32>) {
    let f = max(params.factor, 1u);
    let fx = grid.nx * f;
    let i = id.x;
    let j = id.y;
    if (i >= fx || j >= grid.ny * f) {
        return;
    }
    let b = fine_backtrace(i, j, f, params.order);
    let s = fine_stencil(b, f);
    let inflow = inflow_weight(b);
    var band = 0.0;
    if (inflow.w > 0.0) {
        band = in_band(inflow.k, b);
    }
    let cell = j * fx + i;
    if ((params.channels & CHANNEL_Q0) != 0u) {
        let x = lerp2(q0[s.i00], q0[s.i10], q0[s.i01], q0[s.i11], s.tx, s.ty);
        q0_out[cell] = advected(x, params.q0_rate, params.q0_ambient, params.q0_inflow, inflow, band);
    }
    if ((params.channels & CHANNEL_Q1) != 0u) {
        let x = lerp2(q1[s.i00], q1[s.i10], q1[s.i01], q1[s.i11], s.tx, s.ty);
        q1_out[cell] = advected(x, params.q1_rate, params.q1_ambient, params.q1_inflow, inflow, band);
    }
    if ((params.channels & CHANNEL_RGBA) != 0u) {
        let decay = exp(-params.rgba_rate * inputs.dt);
        let a = rgba[s.i00] + (rgba[s.i10] - rgba[s.i00]) * s.tx;
        let bb = rgba[s.i01] + (rgba[s.i11] - rgba[s.i01]) * s.tx;
        var c = (a + (bb - a) * s.ty) * decay;
        if (inflow.w > 0.0) {
            let side = select(vec4<f32>(0.0), band * grid.side_dye[inflow.k], params.rgba_inflow == INFLOW_DYE);
            c = c + inflow.w * (side * decay - c);
        }
        rgba_out[cell] = c;
    }
}
