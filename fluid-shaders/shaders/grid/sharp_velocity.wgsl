// #include velocity
// #include sharp
// One invocation: the sharper value of u-face (i, j) and v-face (i, j), written over the
// semi-Lagrangian one in u_out / v_out (twin of fluid-cpu/src/kernels/sharp_velocity.rs).
// MacCormack adds half the round trip's error to it; BFECC samples the velocity corrected by
// that half error instead; either is clamped to the range of the velocity at the backtrace's
// stencil. The cubic scheme samples the velocity there by monotone cubics. Faces on walls, and
// those traced back past an open side (advect_velocity's backflow blend), keep their value.

@group(0) @binding(2) var<uniform> params: SharpParams;
@group(1) @binding(0) var<storage, read> u: array<f32>;
@group(1) @binding(1) var<storage, read> v: array<f32>;
@group(1) @binding(2) var<storage, read> u_back: array<f32>;
@group(1) @binding(3) var<storage, read> v_back: array<f32>;
@group(1) @binding(4) var<storage, read_write> u_out: array<f32>;
@group(1) @binding(5) var<storage, read_write> v_out: array<f32>;

fn cubic_u(w: Window) -> f32 {
    let ox = outer(w.sx, grid.nx, true, px());
    let oy = outer(w.sy, grid.ny, false, py());
    let xs = vec4<u32>(ox.x, w.sx.i0, w.sx.i1, ox.y);
    let ys = vec4<u32>(oy.x, w.sy.i0, w.sy.i1, oy.y);
    var r: array<f32, 4>;
    for (var m = 0u; m < 4u; m++) {
        let j = ys[m];
        r[m] = mono_cubic(u[ui_(xs.x, j)], u[ui_(xs.y, j)], u[ui_(xs.z, j)], u[ui_(xs.w, j)], w.sx.t);
    }
    return mono_cubic(r[0], r[1], r[2], r[3], w.sy.t);
}

fn cubic_v(w: Window) -> f32 {
    let ox = outer(w.sx, grid.nx, false, px());
    let oy = outer(w.sy, grid.ny, true, py());
    let xs = vec4<u32>(ox.x, w.sx.i0, w.sx.i1, ox.y);
    let ys = vec4<u32>(oy.x, w.sy.i0, w.sy.i1, oy.y);
    var r: array<f32, 4>;
    for (var m = 0u; m < 4u; m++) {
        let j = ys[m];
        r[m] = mono_cubic(v[vi_(xs.x, j)], v[vi_(xs.y, j)], v[vi_(xs.z, j)], v[vi_(xs.w, j)], w.sx.t);
    }
    return mono_cubic(r[0], r[1], r[2], r[3], w.sy.t);
}

// The new value from the four stencil samples of the field (q) and of its round trip (b), the
// semi-Lagrangian value, the face's own field and round-trip values and the decay.
fn sharpen(q: vec4<f32>, b: vec4<f32>, t: vec2<f32>, hat: f32, own: f32, own_back: f32, decay: f32) -> f32 {
    var x: f32;
    if (params.scheme == SHARP_MACCORMACK) {
        x = hat + 0.5 * decay * (own - own_back);
    } else {
        let c = 1.5 * q - 0.5 * b;
        x = lerp2(c.x, c.y, c.z, c.w, t.x, t.y) * decay;
    }
    let lo = min(min(q.x, q.y), min(q.z, q.w)) * decay;
    let hi = max(max(q.x, q.y), max(q.z, q.w)) * decay;
    return clamp(x, lo, hi);
}

@compute @workgroup_size(WG_X, WG_Y)
fn sharp_velocity(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i > grid.nx || j > grid.ny) {
        return;
    }
    let dt = inputs.dt;
    let s = dt * grid.inv_h;
    let decay = exp(-params.rate * dt);
    if (j < grid.ny && !u_on_wall(i)) {
        let bt = backtrace(vec2<f32>(f32(canon_u(i)), f32(j) + 0.5), params.order, s);
        let w = window(LATTICE_U, bt);
        let o = ui_(i, j);
        if (backflow_weight(bt) > 0.0) {
            // Drawn in through an outflow: the blended semi-Lagrangian value stays.
        } else if (params.scheme == SHARP_CUBIC) {
            u_out[o] = cubic_u(w) * decay;
        } else {
            let k = vec4<u32>(ui_(w.sx.i0, w.sy.i0), ui_(w.sx.i1, w.sy.i0), ui_(w.sx.i0, w.sy.i1), ui_(w.sx.i1, w.sy.i1));
            let q = vec4<f32>(u[k.x], u[k.y], u[k.z], u[k.w]);
            let b = vec4<f32>(u_back[k.x], u_back[k.y], u_back[k.z], u_back[k.w]);
            u_out[o] = sharpen(q, b, vec2<f32>(w.sx.t, w.sy.t), u_out[o], u[o], u_back[o], decay);
        }
    }
    if (i < grid.nx && !v_on_wall(j)) {
        let bt = backtrace(vec2<f32>(f32(i) + 0.5, f32(canon_v(j))), params.order, s);
        let w = window(LATTICE_V, bt);
        let o = vi_(i, j);
        if (backflow_weight(bt) > 0.0) {
            // As above.
        } else if (params.scheme == SHARP_CUBIC) {
            v_out[o] = cubic_v(w) * decay;
        } else {
            let k = vec4<u32>(vi_(w.sx.i0, w.sy.i0), vi_(w.sx.i1, w.sy.i0), vi_(w.sx.i0, w.sy.i1), vi_(w.sx.i1, w.sy.i1));
            let q = vec4<f32>(v[k.x], v[k.y], v[k.z], v[k.w]);
            let b = vec4<f32>(v_back[k.x], v_back[k.y], v_back[k.z], v_back[k.w]);
            v_out[o] = sharpen(q, b, vec2<f32>(w.sx.t, w.sy.t), v_out[o], v[o], v_back[o], decay);
        }
    }
}
