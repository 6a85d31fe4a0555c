// #include velocity
// #include sharp
// One invocation: the backward half of a round trip for u-face (i, j) and v-face (i, j):
// trace the face forward along the velocity (the backtrace with −dt) and sample the forward-
// advected velocity there, undoing its dissipation (twin of fluid-cpu/src/kernels/back_velocity.rs).

@group(0) @binding(2) var<uniform> params: SharpParams;
@group(1) @binding(0) var<storage, read> u: array<f32>;
@group(1) @binding(1) var<storage, read> v: array<f32>;
@group(1) @binding(2) var<storage, read> u_hat: array<f32>;
@group(1) @binding(3) var<storage, read> v_hat: array<f32>;
@group(1) @binding(4) var<storage, read_write> u_back: array<f32>;
@group(1) @binding(5) var<storage, read_write> v_back: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn back_velocity(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i > grid.nx || j > grid.ny) {
        return;
    }
    let s = -inputs.dt * grid.inv_h;
    let undo = exp(params.rate * inputs.dt);
    if (j < grid.ny) {
        let w = window(LATTICE_U, backtrace(vec2<f32>(f32(canon_u(i)), f32(j) + 0.5), params.order, s));
        let x = lerp2(
            u_hat[ui_(w.sx.i0, w.sy.i0)], u_hat[ui_(w.sx.i1, w.sy.i0)],
            u_hat[ui_(w.sx.i0, w.sy.i1)], u_hat[ui_(w.sx.i1, w.sy.i1)], w.sx.t, w.sy.t);
        u_back[ui_(i, j)] = x * undo;
    }
    if (i < grid.nx) {
        let w = window(LATTICE_V, backtrace(vec2<f32>(f32(i) + 0.5, f32(canon_v(j))), params.order, s));
        let x = lerp2(
            v_hat[vi_(w.sx.i0, w.sy.i0)], v_hat[vi_(w.sx.i1, w.sy.i0)],
            v_hat[vi_(w.sx.i0, w.sy.i1)], v_hat[vi_(w.sx.i1, w.sy.i1)], w.sx.t, w.sy.t);
        v_back[vi_(i, j)] = x * undo;
    }
}
