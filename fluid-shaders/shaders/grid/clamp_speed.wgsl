// One invocation: u-face (i, j) and v-face (i, j) scaled so that the speed there is at most
// max_speed: |(u, v~)| with v~ the mean of the v-faces around the u-face (and u~ likewise), so
// a diagonal flow is held to max_speed, not to max_speed on each axis.

@group(0) @binding(2) var<uniform> params: ForceParams;
@group(1) @binding(0) var<storage, read> u: array<f32>;
@group(1) @binding(1) var<storage, read> v: array<f32>;
@group(1) @binding(2) var<storage, read_write> u_out: array<f32>;
@group(1) @binding(3) var<storage, read_write> v_out: array<f32>;

// a scaled so that |(a, b)| <= max_speed; the scale from the larger magnitude first, so no
// square overflows. A NaN stays NaN.
fn limited(a: f32, b: f32) -> f32 {
    let m = params.max_speed;
    let k = max(abs(a), abs(b));
    if (k > m) {
        let ra = a / k;
        let rb = b / k;
        return ra * (m / sqrt(ra * ra + rb * rb));
    }
    // Both within the limit on their own: the speed may still pass it.
    let s2 = a * a + b * b;
    if (s2 > m * m) {
        return a * (m / sqrt(s2));
    }
    return a;
}

// The mean of the v-faces of cells (il, j) and (ir, j) (each on its own where the other is
// off the grid).
fn v_mean(il: i32, ir: i32, j: u32) -> f32 {
    var sum = 0.0;
    var n = 0.0;
    if (il != NONE) {
        sum += v[vi_(u32(il), j)] + v[vi_(u32(il), j + 1u)];
        n += 2.0;
    }
    if (ir != NONE) {
        sum += v[vi_(u32(ir), j)] + v[vi_(u32(ir), j + 1u)];
        n += 2.0;
    }
    return sum / n;
}

fn u_mean(i: u32, jd: i32, ju: i32) -> f32 {
    var sum = 0.0;
    var n = 0.0;
    if (jd != NONE) {
        sum += u[ui_(i, u32(jd))] + u[ui_(i + 1u, u32(jd))];
        n += 2.0;
    }
    if (ju != NONE) {
        sum += u[ui_(i, u32(ju))] + u[ui_(i + 1u, u32(ju))];
        n += 2.0;
    }
    return sum / n;
}

@compute @workgroup_size(WG_X, WG_Y)
fn clamp_speed(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i > grid.nx || j > grid.ny) {
        return;
    }
    if (j < grid.ny) {
        // The cells left and right of the face, from its canonical index (a periodic seam's
        // two copies agree).
        let ic = canon_u(i);
        let il = prev(ic, grid.nx, px());
        let ir = select(NONE, i32(ic), ic < grid.nx);
        u_out[ui_(i, j)] = limited(u[ui_(i, j)], v_mean(il, ir, j));
    }
    if (i < grid.nx) {
        let jc = canon_v(j);
        let jd = prev(jc, grid.ny, py());
        let ju = select(NONE, i32(jc), jc < grid.ny);
        v_out[vi_(i, j)] = limited(v[vi_(i, j)], u_mean(i, jd, ju));
    }
}
