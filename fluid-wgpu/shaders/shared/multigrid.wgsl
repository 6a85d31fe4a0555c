// Shared by the multigrid kernels (which bind the packed hierarchy as `mg` and a `params:
// MgParams`): the unscaled Poisson stencil on one level, in the CPU's order (left, right, down,
// up). Twin of `level_neighbours` in fluid-cpu/src/kernels/common.rs.

struct LevelSum {
    sum: f32,
    n: f32,
}

fn level_neighbours(p: u32, nx: u32, ny: u32, i: u32, j: u32) -> LevelSum {
    var r: LevelSum;
    r.sum = 0.0;
    r.n = 0.0;
    let il = prev(i, nx, px());
    if (il != NONE) {
        r.sum += mg[p + j * nx + u32(il)];
        r.n += 1.0;
    }
    let ir = next(i, nx, px());
    if (ir != NONE) {
        r.sum += mg[p + j * nx + u32(ir)];
        r.n += 1.0;
    }
    let jd = prev(j, ny, py());
    if (jd != NONE) {
        r.sum += mg[p + u32(jd) * nx + i];
        r.n += 1.0;
    }
    let ju = next(j, ny, py());
    if (ju != NONE) {
        r.sum += mg[p + u32(ju) * nx + i];
        r.n += 1.0;
    }
    return r;
}
