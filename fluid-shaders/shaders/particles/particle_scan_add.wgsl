// One invocation: value i of a block-wise prefix sum plus the scanned totals of the blocks
// before its own (twin of fluid-cpu/src/kernels/particle_scan_add.rs).
// #include particles

@group(0) @binding(2) var<uniform> params: ScanParams;
@group(1) @binding(0) var<storage, read_write> scanned: array<u32>;
@group(1) @binding(1) var<storage, read> totals: array<u32>;

@compute @workgroup_size(256)
fn particle_scan_add(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.len) {
        return;
    }
    scanned[i] += totals[i / SCAN_BLOCK];
}
