// Shared by the pressure kernels (which bind `pressure`): the 5-point neighbour sum over the
// neighbours that are not walls, in the CPU's order (left, right, down, up).

struct Neighbours {
    sum: f32,
    n: f32,
}

fn neighbours(i: u32, j: u32) -> Neighbours {
    var r: Neighbours;
    r.sum = 0.0;
    r.n = 0.0;
    let il = prev(i, grid.nx, px());
    if (il != NONE) {
        r.sum += pressure[ci(u32(il), j)];
        r.n += 1.0;
    }
    let ir = next(i, grid.nx, px());
    if (ir != NONE) {
        r.sum += pressure[ci(u32(ir), j)];
        r.n += 1.0;
    }
    let jd = prev(j, grid.ny, py());
    if (jd != NONE) {
        r.sum += pressure[ci(i, u32(jd))];
        r.n += 1.0;
    }
    let ju = next(j, grid.ny, py());
    if (ju != NONE) {
        r.sum += pressure[ci(i, u32(ju))];
        r.n += 1.0;
    }
    return r;
}
