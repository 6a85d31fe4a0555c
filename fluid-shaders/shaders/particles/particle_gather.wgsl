// One invocation: slot s takes the particle the sort put there, its position, velocity and
// hash cell (twin of fluid-cpu/src/kernels/particle_gather.rs).
// #include particles

@group(0) @binding(2) var<uniform> params: HashParams;
@group(1) @binding(0) var<storage, read> order: array<u32>;
@group(1) @binding(1) var<storage, read> position: array<vec2<f32>>;
@group(1) @binding(2) var<storage, read> velocity: array<vec2<f32>>;
@group(1) @binding(3) var<storage, read> keys: array<u32>;
@group(1) @binding(4) var<storage, read_write> position_out: array<vec2<f32>>;
@group(1) @binding(5) var<storage, read_write> velocity_out: array<vec2<f32>>;
@group(1) @binding(6) var<storage, read_write> cell: array<u32>;

@compute @workgroup_size(256)
fn particle_gather(@builtin(global_invocation_id) id: vec3<u32>) {
    let s = id.x;
    if (s >= params.count) {
        return;
    }
    let src = order[s];
    position_out[s] = position[src];
    velocity_out[s] = velocity[src];
    cell[s] = keys[src];
}
