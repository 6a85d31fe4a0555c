// A dot product of two level-0 vectors of the packed buffer in two passes (twin of
// fluid-cpu/src/kernels/cg_dot.rs): flag 0: each of `count` workgroups folds one contiguous
// chunk of x[k] * z[k] into partials[wg]; flag 1: one workgroup folds the partials into
// scalars[slot]. Fixed order: lane t takes t, t + 256, ...; then a pairwise tree.

@group(0) @binding(2) var<uniform> params: CgParams;
@group(1) @binding(0) var<storage, read_write> mg: array<f32>;

const LANES: u32 = 256u;
var<workgroup> scratch: array<f32, 256>;

@compute @workgroup_size(256)
fn cg_dot(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wg: vec3<u32>) {
    var acc = 0.0;
    if (params.flag == 0u) {
        let len = params.nx * params.ny;
        let chunk = (len + params.count - 1u) / params.count;
        let start = wg.x * chunk;
        let end = min(start + chunk, len);
        for (var k = start + lid.x; k < end; k += LANES) {
            acc = acc + mg[params.x + k] * mg[params.z + k];
        }
    } else {
        for (var k = lid.x; k < params.count; k += LANES) {
            acc = acc + mg[params.partials + k];
        }
    }
    scratch[lid.x] = acc;
    for (var s = LANES / 2u; s > 0u; s = s / 2u) {
        workgroupBarrier();
        if (lid.x < s) {
            scratch[lid.x] = scratch[lid.x] + scratch[lid.x + s];
        }
    }
    workgroupBarrier();
    if (lid.x == 0u) {
        if (params.flag == 0u) {
            mg[params.partials + wg.x] = scratch[0];
        } else {
            mg[params.scalars + params.slot] = scratch[0];
        }
    }
}
