// Reductions of one field to a scalar, in two passes with a fixed order (deterministic):
// reduce_partial: one workgroup folds a contiguous chunk of `len` values into partials[wg];
// reduce_final: one workgroup folds the partials into results[slot].
// op 0: max |x|; op 1: sum of x^2.

@group(0) @binding(2) var<uniform> params: ReduceParams;
@group(1) @binding(0) var<storage, read> data: array<f32>;
@group(1) @binding(1) var<storage, read_write> partials: array<f32>;
@group(1) @binding(2) var<storage, read_write> results: array<f32>;

const WG: u32 = 256u;
var<workgroup> scratch: array<f32, 256>;

fn fold(a: f32, x: f32) -> f32 {
    return select(a + x * x, max(a, abs(x)), params.op == 0u);
}

fn combine(a: f32, b: f32) -> f32 {
    return select(a + b, max(a, b), params.op == 0u);
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
