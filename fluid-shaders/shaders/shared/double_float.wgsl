// Double-float arithmetic: a value held as hi + lo in two f32s (twins of two_sum, df_add,
// trunc12 and df_add_product in fluid-cpu/src/kernels/common/mod.rs). Additions only, or bit
// masks, so no contraction into fused multiply-adds can change them.

// x unchanged, passed through grid.zero (always 0, but unknown to the compiler), so that no
// algebraic simplification sees through it: shader compilers may rewrite (a + b) - a into b
// for operations not marked exact (Mesa's NIR does; measured on lavapipe: two-sum returned a
// zero error), and naga cannot mark them exact.
fn opaque(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) | grid.zero);
}

// a + b as the rounded sum and its rounding error (Knuth's two-sum).
fn two_sum(a: f32, b: f32) -> vec2<f32> {
    let s = opaque(a + b);
    let bb = opaque(s - a);
    return vec2<f32>(s, (a - (s - bb)) + (b - bb));
}

// (hi, lo) + x, renormalised.
fn df_add(hi: f32, lo: f32, x: f32) -> vec2<f32> {
    let t = two_sum(hi, x);
    let e = t.y + lo;
    let h = opaque(t.x + e);
    return vec2<f32>(h, e - (h - t.x));
}

// x with its 12 lowest mantissa bits cleared (12 significant bits).
fn trunc12(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) & 0xFFFFF000u);
}

// (hi, lo) + a d for a with 12 significant bits: d split into two 12-bit halves, whose
// products with a are exact.
fn df_add_product(hi: f32, lo: f32, a: f32, d: f32) -> vec2<f32> {
    let d_hi = trunc12(d);
    let r = df_add(hi, lo, a * d_hi);
    return df_add(r.x, r.y, a * (d - d_hi));
}
