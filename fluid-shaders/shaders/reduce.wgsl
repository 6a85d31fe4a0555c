// Reductions of one field to a scalar, in two passes with a fixed order (deterministic):
// reduce_partial: one workgroup folds a contiguous chunk of `len` values into partials[wg];
// reduce_final: one workgroup folds the partials into results[slot].
// op 0: max |x|, compared as the bits of |x| (NaN above +inf above every finite value, so a
// non-finite value is never skipped, whatever max() does with NaN); op 1: sum of x^2.

@group(0) @binding(2) var<uniform> params: ReduceParams;
@group(1) @binding(0) var<storage, read> data: array<f32>;
@group(1) @binding(1) var<storage, read_write> partials: array<f32>;
@group(1) @binding(2) var<storage, read_write> results: array<f32>;

const WG: u32 = 256u;
var<workgroup> scratch: array<f32, 256>;

// max of two values >= 0 (or NaN with the sign bit clear) by their bits.
fn max_bits(a: f32, b: f32) -> f32 {
    return bitcast<f32>(max(bitcast<u32>(a), bitcast<u32>(b)));
}

fn fold(a: f32, x: f32) -> f32 {
    return select(a + x * x, max_bits(a, bitcast<f32>(bitcast<u32>(x) & 0x7fffffffu)), params.op == 0u);
}

fn combine(a: f32, b: f32) -> f32 {
    return select(a + b, max_bits(a, b), params.op == 0u);
}

fn tree(lid: u32) {
    for (var s = WG / 2u; s > 0u; s = s / 2u) {
        workgroupBarrier();
        if (lid < s) {
            scratch[lid] = combine(scratch[lid], scratch[lid + s]);
        }
    }
    workgroupBarrier();
}

@compute @workgroup_size(256)
fn reduce_partial(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wg: vec3<u32>) {
    let chunk = (params.len + params.partials - 1u) / params.partials;
    let start = wg.x * chunk;
    let end = min(start + chunk, params.len);
    var acc = 0.0;
    for (var k = start + lid.x; k < end; k += WG) {
        acc = fold(acc, data[k]);
    }
    scratch[lid.x] = acc;
    tree(lid.x);
    if (lid.x == 0u) {
        partials[wg.x] = scratch[0];
    }
}

@compute @workgroup_size(256)
fn reduce_final(@builtin(local_invocation_id) lid: vec3<u32>) {
    var acc = 0.0;
    for (var k = lid.x; k < params.partials; k += WG) {
        acc = combine(acc, partials[k]);
    }
    scratch[lid.x] = acc;
    tree(lid.x);
    if (lid.x == 0u) {
        results[params.slot] = scratch[0];
    }
}
