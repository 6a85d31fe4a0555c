// One invocation: slot s takes the stable id of the particle the sort put there, and that id
// learns its slot (twin of fluid-cpu/src/kernels/particle_ids.rs).
// #include particles

@group(0) @binding(2) var<uniform> params: HashParams;
@group(1) @binding(0) var<storage, read> order: array<u32>;
@group(1) @binding(1) var<storage, read> ids: array<u32>;
@group(1) @binding(2) var<storage, read_write> ids_out: array<u32>;
@group(1) @binding(3) var<storage, read_write> slots: array<u32>;

@compute @workgroup_size(256)
fn particle_ids(@builtin(global_invocation_id) id: vec3<u32>) {
    let s = id.x;
    if (s >= params.count) {
        return;
    }
    let a = ids[order[s]];
    ids_out[s] = a;
    slots[a] = s;
}
