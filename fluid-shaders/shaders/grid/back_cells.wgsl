// #include velocity
// #include sharp
// One invocation: the backward half of a round trip for cell (i, j): trace its centre forward
// along the velocity (the backtrace with −dt) and sample the forward-advected scalar and dye
// there, undoing their dissipation (twin of fluid-cpu/src/kernels/back_cells.rs).

@group(0) @binding(2) var<uniform> params: SharpParams;
@group(1) @binding(0) var<storage, read> u: array<f32>;
@group(1) @binding(1) var<storage, read> v: array<f32>;
@group(1) @binding(2) var<storage, read> hat: array<f32>;
@group(1) @binding(3) var<storage, read_write> q_back: array<f32>;
@group(1) @binding(4) var<storage, read> dye_hat: array<vec4<f32>>;
@group(1) @binding(5) var<storage, read_write> dye_back: array<vec4<f32>>;

@compute @workgroup_size(WG_X, WG_Y)
fn back_cells(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    let dt = inputs.dt;
    let w = window(LATTICE_CELLS, backtrace(vec2<f32>(f32(i) + 0.5, f32(j) + 0.5), params.order, -dt * grid.inv_h));
    let c00 = ci(w.sx.i0, w.sy.i0);
    let c10 = ci(w.sx.i1, w.sy.i0);
    let c01 = ci(w.sx.i0, w.sy.i1);
    let c11 = ci(w.sx.i1, w.sy.i1);
    let c = ci(i, j);
    if ((params.fields & SHARP_SCALAR) != 0u) {
        let x = lerp2(hat[c00], hat[c10], hat[c01], hat[c11], w.sx.t, w.sy.t);
        q_back[c] = dissipate(x, params.ambient, exp(params.rate * dt));
    }
    if ((params.fields & SHARP_DYE) != 0u) {
        let a = dye_hat[c00] + (dye_hat[c10] - dye_hat[c00]) * w.sx.t;
        let b = dye_hat[c01] + (dye_hat[c11] - dye_hat[c01]) * w.sx.t;
        dye_back[c] = (a + (b - a) * w.sy.t) * exp(params.dye_rate * dt);
    }
}
