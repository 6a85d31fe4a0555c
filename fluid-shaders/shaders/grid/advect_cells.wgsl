// #include velocity
// One invocation: trace cell (i, j)'s centre back along the velocity and sample density,
// temperature and dye there (those whose bit is set), applying each field's dissipation.
// Near an inflow side the ghost cell past it holds what the inflow carries: a point traced
// back within half a cell of the side or beyond blends toward it (inflow_weight).

@group(0) @binding(2) var<uniform> params: AdvectParams;
@group(1) @binding(0) var<storage, read> u: array<f32>;
@group(1) @binding(1) var<storage, read> v: array<f32>;
@group(1) @binding(2) var<storage, read> density: array<f32>;
@group(1) @binding(3) var<storage, read> temperature: array<f32>;
@group(1) @binding(4) var<storage, read> dye: array<vec4<f32>>;
@group(1) @binding(5) var<storage, read_write> density_out: array<f32>;
@group(1) @binding(6) var<storage, read_write> temperature_out: array<f32>;
@group(1) @binding(7) var<storage, read_write> dye_out: array<vec4<f32>>;

@compute @workgroup_size(WG_X, WG_Y)
fn advect_cells(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    let dt = inputs.dt;
    let p = vec2<f32>(f32(i) + 0.5, f32(j) + 0.5);
    let b = backtrace(p, params.order, dt * grid.inv_h);
    let sx = stencil(b.x - 0.5, grid.nx, false, px());
    let sy = stencil(b.y - 0.5, grid.ny, false, py());
    let c00 = ci(sx.i0, sy.i0);
    let c10 = ci(sx.i1, sy.i0);
    let c01 = ci(sx.i0, sy.i1);
    let c11 = ci(sx.i1, sy.i1);
    let c = ci(i, j);
    let inflow = inflow_weight(b);
    let carry = grid.side_carry[inflow.k];
    let band = in_band(inflow.k, b);
    if ((params.fields & ADVECT_DENSITY) != 0u) {
        let decay = exp(-params.density_dissipation * dt);
        let d = lerp2(density[c00], density[c10], density[c01], density[c11], sx.t, sy.t) * decay;
        density_out[c] = select(d, d + inflow.w * (band * carry.x * decay - d), inflow.w > 0.0);
    }
    if ((params.fields & ADVECT_TEMPERATURE) != 0u) {
        let decay = exp(-params.temperature_dissipation * dt);
        let amb = params.ambient_temperature;
        let t = lerp2(temperature[c00], temperature[c10], temperature[c01], temperature[c11], sx.t, sy.t);
        let td = amb + (t - amb) * decay;
        temperature_out[c] = select(td, td + inflow.w * ((amb + (carry.y - amb) * decay) - td), inflow.w > 0.0);
    }
    if ((params.fields & ADVECT_DYE) != 0u) {
        let decay = exp(-params.dye_dissipation * dt);
        let a = dye[c00] + (dye[c10] - dye[c00]) * sx.t;
        let bb = dye[c01] + (dye[c11] - dye[c01]) * sx.t;
        let cd = (a + (bb - a) * sy.t) * decay;
        dye_out[c] = select(cd, cd + inflow.w * (band * grid.side_dye[inflow.k] * decay - cd), inflow.w > 0.0);
    }
}
