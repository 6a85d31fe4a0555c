// #include pressure_df
// #include pressure_df_solid
// One invocation: cell (i, j): the start of MGPCG (twin of fluid-cpu/src/kernels/cg_init.rs):
// x = the previous double-float pressure (or zero; the low part after the high part),
// r = b - A x with b = -h^2 div / dt, A in difference form (weighted by the faces with obstacles).

@group(0) @binding(2) var<uniform> params: CgParams;
@group(1) @binding(0) var<storage, read> pressure: array<f32>;
@group(1) @binding(1) var<storage, read> pressure_lo: array<f32>;
@group(1) @binding(2) var<storage, read> divergence: array<f32>;
@group(1) @binding(3) var<storage, read_write> mg: array<f32>;
@group(1) @binding(4) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(5) var<storage, read> v_faces: array<vec2<f32>>;

@compute @workgroup_size(WG_X, WG_Y)
fn cg_init(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= params.nx || j >= params.ny) {
        return;
    }
    let c = ci(i, j);
    let n = params.nx * params.ny;
    let b = -grid.h * grid.h / inputs.dt * divergence[c];
    if (params.flag != 0u) {
        mg[params.x + c] = 0.0;
        mg[params.x + n + c] = 0.0;
        mg[params.r + c] = b;
        return;
    }
    mg[params.x + c] = pressure[c];
    mg[params.x + n + c] = pressure_lo[c];
    mg[params.r + c] = b + any_df_differences(i, j);
}
