// One workgroup: the exclusive prefix sum of a block of 1024 values (4 a thread, then a
// Hillis-Steele scan of the threads' sums), and the block's total (twin of
// fluid-cpu/src/kernels/particle_scan.rs). Integers: the same sums in any order.
// #include particles

@group(0) @binding(2) var<uniform> params: ScanParams;
@group(1) @binding(0) var<storage, read> values: array<u32>;
@group(1) @binding(1) var<storage, read_write> scanned: array<u32>;
@group(1) @binding(2) var<storage, read_write> totals: array<u32>;

var<workgroup> sums: array<u32, 256>;

@compute @workgroup_size(256)
fn particle_scan(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wg: vec3<u32>) {
    let base = wg.x * SCAN_BLOCK + lid.x * 4u;
    var own: array<u32, 4>;
    var total = 0u;
    for (var k = 0u; k < 4u; k++) {
        own[k] = total;
        if (base + k < params.len) {
            total += values[base + k];
        }
    }
    sums[lid.x] = total;
    workgroupBarrier();
    for (var offset = 1u; offset < PWG; offset *= 2u) {
        var before = 0u;
        if (lid.x >= offset) {
            before = sums[lid.x - offset];
        }
        workgroupBarrier();
        sums[lid.x] += before;
        workgroupBarrier();
    }
    var start = 0u;
    if (lid.x > 0u) {
        start = sums[lid.x - 1u];
    }
    for (var k = 0u; k < 4u; k++) {
        if (base + k < params.len) {
            scanned[base + k] = start + own[k];
        }
    }
    if (lid.x == PWG - 1u) {
        totals[wg.x] = sums[PWG - 1u];
    }
}
