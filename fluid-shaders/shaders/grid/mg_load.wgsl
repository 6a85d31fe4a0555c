// #include pressure_df
// #include pressure_df_solid
// One invocation: cell (i, j) of level 0 of the multigrid hierarchy (twin of
// fluid-cpu/src/kernels/mg_load.rs). Mode LOAD_COPY (colour 0): b = -h^2 div / dt, p = the
// previous pressure or zero. Mode LOAD_RESIDUAL (1): b = -h^2 div / dt - A (pressure +
// pressure_lo) in difference form; p untouched; on a cold start b = -h^2 div / dt and the
// pressure is set to zero (each invocation reads only its own cell then). With obstacles A is
// weighted by the faces' open fractions.

@group(0) @binding(2) var<uniform> params: MgParams;
@group(1) @binding(0) var<storage, read_write> pressure: array<f32>;
@group(1) @binding(1) var<storage, read_write> pressure_lo: array<f32>;
@group(1) @binding(2) var<storage, read> divergence: array<f32>;
@group(1) @binding(3) var<storage, read_write> mg: array<f32>;
@group(1) @binding(4) var<storage, read> u_faces: array<vec2<f32>>;
@group(1) @binding(5) var<storage, read> v_faces: array<vec2<f32>>;

@compute @workgroup_size(WG_X, WG_Y)
fn mg_load(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.nx || id.y >= params.ny) {
        return;
    }
    let c = id.y * params.nx + id.x;
    let scale = -grid.h * grid.h / inputs.dt;
    let cold = params.zero_initial != 0u;
    if (params.colour == 1u) {
        var b = scale * divergence[c];
        if (cold) {
            pressure[c] = 0.0;
            pressure_lo[c] = 0.0;
        } else {
            b += any_df_differences(id.x, id.y);
        }
        mg[params.b + c] = b;
        return;
    }
    mg[params.b + c] = scale * divergence[c];
    mg[params.p + c] = select(pressure[c], 0.0, cold);
}
