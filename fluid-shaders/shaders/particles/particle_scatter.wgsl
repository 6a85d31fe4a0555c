// One invocation: particle i takes a slot in its cell's run, the cell's count taken one down
// (the counts end at zero); the run's order is the atomics', which particle_order then sorts
// (twin of fluid-cpu/src/kernels/particle_scatter.rs).
// #include particles

@group(0) @binding(2) var<uniform> params: HashParams;
@group(1) @binding(0) var<storage, read> keys: array<u32>;
@group(1) @binding(1) var<storage, read> starts: array<u32>;
@group(1) @binding(2) var<storage, read_write> counts: array<atomic<u32>>;
@group(1) @binding(3) var<storage, read_write> order: array<u32>;

@compute @workgroup_size(256)
fn particle_scatter(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.count) {
        return;
    }
    let k = keys[i];
    let left = atomicSub(&counts[k], 1u);
    order[starts[k] + left - 1u] = i;
}
