// One invocation: new particle j of an emitter this step, into slot first + j (twin of
// fluid-cpu/src/kernels/particle_emit.rs). Its row leaves the nozzle `late` seconds into the
// step, so it starts that far upstream and reaches the nozzle then; its id is its slot.
// #include particles

@group(0) @binding(2) var<uniform> params: EmitParams;
@group(1) @binding(0) var<storage, read_write> position: array<vec2<f32>>;
@group(1) @binding(1) var<storage, read_write> velocity: array<vec2<f32>>;
@group(1) @binding(2) var<storage, read_write> ids: array<u32>;

@compute @workgroup_size(256)
fn particle_emit(@builtin(global_invocation_id) id: vec3<u32>) {
    let j = id.x;
    if (j >= params.count) {
        return;
    }
    let p = params.index + j;
    let row = p / params.per_row;
    let col = p % params.per_row;
    let late = params.lead + f32(row) * params.interval;
    let off = f32(col) - 0.5 * f32(params.per_row - 1u);
    let s = params.first + j;
    position[s] = vec2<f32>(
        params.center.x + params.across.x * off - params.velocity.x * late,
        params.center.y + params.across.y * off - params.velocity.y * late,
    );
    velocity[s] = params.velocity;
    ids[s] = s;
}
