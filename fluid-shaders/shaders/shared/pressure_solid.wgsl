// Shared by the pressure sweeps that bind `pressure`, `u_faces` and `v_faces`: the 5-point
// neighbour sum with each neighbour weighted by the open fraction of the face between, in the
// CPU's order (left, right, down, up); past the box's edge the pressure is zero with the
// side's edge_weight, so only that weight counts. Needs the `pressure` and `solid` snippets.

fn weighted_neighbours(i: u32, j: u32) -> Neighbours {
    var r: Neighbours;
    r.sum = 0.0;
    r.n = 0.0;
    let il = prev(i, grid.nx, px());
    if (il != NONE) {
        let w = u_faces[ui_(i, j)].x;
        r.sum += w * pressure[ci(u32(il), j)];
        r.n += w;
    } else {
        r.n += edge_weight(LEFT);
    }
    let ir = next(i, grid.nx, px());
    if (ir != NONE) {
        let w = u_faces[ui_(i + 1u, j)].x;
        r.sum += w * pressure[ci(u32(ir), j)];
        r.n += w;
    } else {
        r.n += edge_weight(RIGHT);
    }
    let jd = prev(j, grid.ny, py());
    if (jd != NONE) {
        let w = v_faces[vi_(i, j)].x;
        r.sum += w * pressure[ci(i, u32(jd))];
        r.n += w;
    } else {
        r.n += edge_weight(BOTTOM);
    }
    let ju = next(j, grid.ny, py());
    if (ju != NONE) {
        let w = v_faces[vi_(i, j + 1u)].x;
        r.sum += w * pressure[ci(i, u32(ju))];
        r.n += w;
    } else {
        r.n += edge_weight(TOP);
    }
    return r;
}

// The sweeps' neighbours: weighted with obstacles, plain without.
fn sweep_neighbours(i: u32, j: u32) -> Neighbours {
    if (grid.solids != 0u) {
        return weighted_neighbours(i, j);
    }
    return neighbours(i, j);
}
