// One invocation: particle i's hash cell into keys, one more in that cell's count (twin of
// fluid-cpu/src/kernels/particle_hash.rs).
// #include particles

@group(0) @binding(2) var<uniform> params: HashParams;
@group(1) @binding(0) var<storage, read> position: array<vec2<f32>>;
@group(1) @binding(1) var<storage, read_write> keys: array<u32>;
@group(1) @binding(2) var<storage, read_write> counts: array<atomic<u32>>;

@compute @workgroup_size(256)
fn particle_hash(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.count) {
        return;
    }
    let k = cell_of(position[i], params.inv_cell, params.cells_x, params.cells_y);
    keys[i] = k;
    atomicAdd(&counts[k], 1u);
}
