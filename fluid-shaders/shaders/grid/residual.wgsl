// #include pressure_df
// #include solid
// #include pressure_df_solid
// One invocation: the residual of the pressure equation at cell (i, j) in divergence units,
// r = div - dt lap p: the divergence the projected velocity keeps. The pressure is the
// double-float pressure + pressure_lo, differenced as in df_differences.

@group(1) @binding(0) var<storage, read> pressure: array<f32>;
@group(1) @binding(1) var<storage, read> pressure_lo: array<f32>;
@group(1) @binding(2) var<storage, read> divergence: array<f32>;
@group(1) @binding(3) var<storage, read_write> residual_out: array<f32>;
@group(1) @binding(4) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(5) var<storage, read> v_faces: array<vec2<f32>>;

@compute @workgroup_size(WG_X, WG_Y)
fn residual(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= grid.nx || j >= grid.ny) {
        return;
    }
    let c = ci(i, j);
    let k = inputs.dt * grid.inv_h * grid.inv_h;
    if (grid.solids != 0u) {
        residual_out[c] = divergence[c] - k * weighted_df_differences(i, j);
        return;
    }
    residual_out[c] = divergence[c] - k * df_differences(i, j);
}
