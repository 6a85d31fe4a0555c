// #include velocity
// #include sharp
// One invocation: the sharper value of cell (i, j)'s scalar and dye, written over the
// semi-Lagrangian one in q_out / dye_out (twin of fluid-cpu/src/kernels/sharp_cells.rs).
// MacCormack adds half the round trip's error to it; BFECC samples the field corrected by
// that half error instead; either is clamped to the range of the field at the backtrace's
// stencil, channel by channel. The cubic scheme samples the field there by monotone cubics.
// A cell whose point traced back reaches an inflow keeps its blended value.

@group(0) @binding(2) var<uniform> params: SharpParams;
@group(1) @binding(0) var<storage, read> u: array<f32>;
@group(1) @binding(1) var<storage, read> v: array<f32>;
@group(1) @binding(2) var<storage, read> q: array<f32>;
@group(1) @binding(3) var<storage, read> q_back: array<f32>;
@group(1) @binding(4) var<storage, read_write> q_out: array<f32>;
@group(1) @binding(5) var<storage, read> dye: array<vec4<f32>>;
@group(1) @binding(6) var<storage, read> dye_back: array<vec4<f32>>;
@group(1) @binding(7) var<storage, read_write> dye_out: array<vec4<f32>>;

fn cubic_scalar(w: Window) -> f32 {
    let ox = outer(w.sx, grid.nx, false, px());
    let oy = outer(w.sy, grid.ny, false, py());
    let xs = vec4<u32>(ox.x, w.sx.i0, w.sx.i1, ox.y);
    let ys = vec4<u32>(oy.x, w.sy.i0, w.sy.i1, oy.y);
    var r: array<f32, 4>;
    for (var m = 0u; m < 4u; m++) {
        let j = ys[m];
        r[m] = mono_cubic(q[ci(xs.x, j)], q[ci(xs.y, j)], q[ci(xs.z, j)], q[ci(xs.w, j)], w.sx.t);
    }
    return mono_cubic(r[0], r[1], r[2], r[3], w.sy.t);
}

fn cubic_dye(w: Window) -> vec4<f32> {
    let ox = outer(w.sx, grid.nx, false, px());
    let oy = outer(w.sy, grid.ny, false, py());
    let xs = vec4<u32>(ox.x, w.sx.i0, w.sx.i1, ox.y);
    let ys = vec4<u32>(oy.x, w.sy.i0, w.sy.i1, oy.y);
    var out4: vec4<f32>;
    for (var ch = 0u; ch < 4u; ch++) {
        var r: array<f32, 4>;
        for (var m = 0u; m < 4u; m++) {
            let j = ys[m];
            r[m] = mono_cubic(
                dye[ci(xs.x, j)][ch], dye[ci(xs.y, j)][ch], dye[ci(xs.z, j)][ch], dye[ci(xs.w, j)][ch], w.sx.t);
        }
        out4[ch] = mono_cubic(r[0], r[1], r[2], r[3], w.sy.t);
    }
    return out4;
}

@compute @workgroup_size(WG_X, WG_Y)
fn sharp_cells(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    let dt = inputs.dt;
    let b = backtrace(vec2<f32>(f32(i) + 0.5, f32(j) + 0.5), params.order, dt * grid.inv_h);
    if (inflow_weight(b).w > 0.0) {
        return;
    }
    let w = window(LATTICE_CELLS, b);
    let k = vec4<u32>(ci(w.sx.i0, w.sy.i0), ci(w.sx.i1, w.sy.i0), ci(w.sx.i0, w.sy.i1), ci(w.sx.i1, w.sy.i1));
    let c = ci(i, j);
    let cubic = params.scheme == SHARP_CUBIC;
    let mc = params.scheme == SHARP_MACCORMACK;
    if ((params.fields & SHARP_SCALAR) != 0u) {
        let decay = exp(-params.rate * dt);
        let amb = params.ambient;
        if (cubic) {
            q_out[c] = dissipate(cubic_scalar(w), amb, decay);
        } else {
            let f = vec4<f32>(q[k.x], q[k.y], q[k.z], q[k.w]);
            var x: f32;
            if (mc) {
                x = q_out[c] + 0.5 * decay * (q[c] - q_back[c]);
            } else {
                let g = 1.5 * f - 0.5 * vec4<f32>(q_back[k.x], q_back[k.y], q_back[k.z], q_back[k.w]);
                x = dissipate(lerp2(g.x, g.y, g.z, g.w, w.sx.t, w.sy.t), amb, decay);
            }
            let lo = dissipate(min(min(f.x, f.y), min(f.z, f.w)), amb, decay);
            let hi = dissipate(max(max(f.x, f.y), max(f.z, f.w)), amb, decay);
            q_out[c] = clamp(x, lo, hi);
        }
    }
    if ((params.fields & SHARP_DYE) != 0u) {
        let decay = exp(-params.dye_rate * dt);
        if (cubic) {
            dye_out[c] = cubic_dye(w) * decay;
        } else {
            let d00 = dye[k.x];
            let d10 = dye[k.y];
            let d01 = dye[k.z];
            let d11 = dye[k.w];
            var x: vec4<f32>;
            if (mc) {
                x = dye_out[c] + 0.5 * decay * (dye[c] - dye_back[c]);
            } else {
                let g00 = 1.5 * d00 - 0.5 * dye_back[k.x];
                let g10 = 1.5 * d10 - 0.5 * dye_back[k.y];
                let g01 = 1.5 * d01 - 0.5 * dye_back[k.z];
                let g11 = 1.5 * d11 - 0.5 * dye_back[k.w];
                let a = g00 + (g10 - g00) * w.sx.t;
                let bb = g01 + (g11 - g01) * w.sx.t;
                x = (a + (bb - a) * w.sy.t) * decay;
            }
            let lo = min(min(d00, d10), min(d01, d11)) * decay;
            let hi = max(max(d00, d10), max(d01, d11)) * decay;
            dye_out[c] = clamp(x, lo, hi);
        }
    }
}
