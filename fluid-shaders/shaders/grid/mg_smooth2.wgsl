// #include multigrid
// #include tile
// #include double_float
// #include pressure_df
// #include pressure_df_solid
// #include multigrid_solid
// #include smooth2
// Two red-black iterations on a multigrid level in one dispatch, without obstacles (shared/smooth2.wgsl).

const S2_WEIGHTED: bool = false;

@compute @workgroup_size(256)
fn mg_smooth2(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    smooth2(lid, wg);
}
