// #include double_float
// One invocation: cell (i, j): the pressure from level 0's iterate (or MGPCG's x) by the mode
// in colour (twin of fluid-cpu/src/kernels/mg_store.rs): STORE_COPY (0) pressure = p,
// pressure_lo = 0; STORE_PAIR (1) the double-float pair at p; STORE_ADD (2) p added to the
// double-float pressure.

@group(0) @binding(2) var<uniform> params: MgParams;
@group(1) @binding(0) var<storage, read> mg: array<f32>;
@group(1) @binding(1) var<storage, read_write> pressure: array<f32>;
@group(1) @binding(2) var<storage, read_write> pressure_lo: array<f32>;

@compute @workgroup_size(WG_X, WG_Y)
fn mg_store(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.nx || id.y >= params.ny) {
        return;
    }
    let c = id.y * params.nx + id.x;
    let e = mg[params.p + c];
    if (params.colour == 1u) {
        pressure[c] = e;
        pressure_lo[c] = mg[params.p + params.nx * params.ny + c];
        return;
    }
    if (params.colour == 2u) {
        let r = df_add(pressure[c], pressure_lo[c], e);
        pressure[c] = r.x;
        pressure_lo[c] = r.y;
        return;
    }
    pressure[c] = e;
    pressure_lo[c] = 0.0;
}
