// #include obstacles
// One invocation per cell (i, j): the obstacles where they stand at the step's end
// (time + dt); a cell whose centre lies inside one held at a temperature is marked in `held`
// (1, else 0) and takes that temperature, which diffuse_temperature then keeps (twin of
// fluid-cpu/src/kernels/hold_heat.rs).

@group(1) @binding(0) var<storage, read> obstacles: array<vec4<f32>>;
@group(1) @binding(1) var<storage, read_write> temperature: array<f32>;
@group(1) @binding(2) var<storage, read_write> held: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn hold_heat(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    let t = inputs.time + inputs.dt;
    let n = nearest(vec2<f32>((f32(i) + 0.5) * grid.h, (f32(j) + 0.5) * grid.h), t);
    let c = ci(i, j);
    var mark = 0.0;
    if (n.found && n.d < 0.0) {
        let heat = obstacles[n.at + 3u];
        if (heat.x != 0.0) {
            temperature[c] = heat.y;
            mark = 1.0;
        }
    }
    held[c] = mark;
}
