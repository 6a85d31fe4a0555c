// Shared by the kernels that bind `pressure`, `pressure_lo`, `u_faces` and `v_faces` (after
// the `pressure_df` snippet): df_differences with each neighbour weighted by the open fraction
// of the face between (twin of the weighted residual in fluid-cpu/src/kernels/solid.rs); past
// an open side's edge the pressure is zero.

fn weighted_df_differences(i: u32, j: u32) -> f32 {
    let c = ci(i, j);
    let hc = pressure[c];
    let lc = pressure_lo[c];
    var sum = 0.0;
    // (0 - hc) + (0 - lc): the difference to the zero pressure past an open side.
    let edge = (0.0 - hc) + (0.0 - lc);
    let il = prev(i, grid.nx, px());
    if (il != NONE) {
        let k = ci(u32(il), j);
        sum += u_faces[ui_(i, j)].x * ((pressure[k] - hc) + (pressure_lo[k] - lc));
    } else {
        sum += edge_weight(LEFT) * edge;
    }
    let ir = next(i, grid.nx, px());
    if (ir != NONE) {
        let k = ci(u32(ir), j);
        sum += u_faces[ui_(i + 1u, j)].x * ((pressure[k] - hc) + (pressure_lo[k] - lc));
    } else {
        sum += edge_weight(RIGHT) * edge;
    }
    let jd = prev(j, grid.ny, py());
    if (jd != NONE) {
        let k = ci(i, u32(jd));
        sum += v_faces[vi_(i, j)].x * ((pressure[k] - hc) + (pressure_lo[k] - lc));
    } else {
        sum += edge_weight(BOTTOM) * edge;
    }
    let ju = next(j, grid.ny, py());
    if (ju != NONE) {
        let k = ci(i, u32(ju));
        sum += v_faces[vi_(i, j + 1u)].x * ((pressure[k] - hc) + (pressure_lo[k] - lc));
    } else {
        sum += edge_weight(TOP) * edge;
    }
    return sum;
}


// The difference sum of the double-float pressure: weighted with obstacles, plain without.
fn any_df_differences(i: u32, j: u32) -> f32 {
    if (grid.solids != 0u) {
        return weighted_df_differences(i, j);
    }
    return df_differences(i, j);
}
