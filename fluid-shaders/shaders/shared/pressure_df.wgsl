// Shared by the kernels that bind `pressure` and `pressure_lo` (the double-float pressure):
// sum (p_nbr - p) over the neighbours of cell (i, j) that are not walls, left, right, down, up,
// the high and low parts differenced separately (twin of df_differences in
// fluid-cpu/src/kernels/common/mod.rs). It is -(A p) of the unscaled operator.

fn df_differences(i: u32, j: u32) -> f32 {
    let c = ci(i, j);
    let hc = pressure[c];
    let lc = pressure_lo[c];
    var sum = 0.0;
    let il = prev(i, grid.nx, px());
    if (il != NONE) {
        let k = ci(u32(il), j);
        sum += (pressure[k] - hc) + (pressure_lo[k] - lc);
    }
    let ir = next(i, grid.nx, px());
    if (ir != NONE) {
        let k = ci(u32(ir), j);
        sum += (pressure[k] - hc) + (pressure_lo[k] - lc);
    }
    let jd = prev(j, grid.ny, py());
    if (jd != NONE) {
        let k = ci(i, u32(jd));
        sum += (pressure[k] - hc) + (pressure_lo[k] - lc);
    }
    let ju = next(j, grid.ny, py());
    if (ju != NONE) {
        let k = ci(i, u32(ju));
        sum += (pressure[k] - hc) + (pressure_lo[k] - lc);
    }
    return sum;
}
