// Shared by the multigrid kernels that bind `mg_faces` (the open fractions of every level's
// faces; after the `multigrid` snippet): the level's stencil with each neighbour weighted by
// the face between, and the smoothing and restriction over it (twin of the multigrid paths in
// fluid-cpu/src/kernels/solid.rs). A level whose `b` starts at `b` keeps its cells' right-face
// weights at 2 (b / 3) and their top-face weights after them (`mg_faces` is laid out like the
// levels, two arrays per level instead of three). Past the box's edge the level's value is
// zero with the side's level_edge_weight.

fn faces_at(b: u32) -> u32 {
    return 2u * (b / 3u);
}

// The weight past an open side of a level n cells across an axis of grid n0: its zero pressure
// lies half a level-0 cell past the edge, half a level cell plus that from the level's edge
// cell, so the weight is 2r / (r + 1) with r = n0 / n the level's cell size in level-0 cells
// (1 on level 0, 4/3 on level 1, toward 2).
fn level_edge_weight(k: u32, n: u32, n0: u32) -> f32 {
    let r = f32(n0) / f32(n);
    return edge_weight(k) * (2.0 * r / (r + 1.0));
}

// The neighbours of cell (i, j) of a level whose face weights start at w (faces_at(b)).
fn weighted_level_neighbours(p: u32, nx: u32, ny: u32, w: u32, i: u32, j: u32) -> LevelSum {
    let cells = nx * ny;
    var r: LevelSum;
    r.sum = 0.0;
    r.n = 0.0;
    let il = prev(i, nx, px());
    if (il != NONE) {
        let k = j * nx + u32(il);
        r.sum += mg_faces[w + k] * mg[p + k];
        r.n += mg_faces[w + k];
    } else {
        r.n += level_edge_weight(LEFT, nx, grid.nx);
    }
    let ir = next(i, nx, px());
    if (ir != NONE) {
        let k = j * nx + u32(ir);
        r.sum += mg_faces[w + j * nx + i] * mg[p + k];
        r.n += mg_faces[w + j * nx + i];
    } else {
        r.n += level_edge_weight(RIGHT, nx, grid.nx);
    }
    let jd = prev(j, ny, py());
    if (jd != NONE) {
        let k = u32(jd) * nx + i;
        r.sum += mg_faces[w + cells + k] * mg[p + k];
        r.n += mg_faces[w + cells + k];
    } else {
        r.n += level_edge_weight(BOTTOM, ny, grid.ny);
    }
    let ju = next(j, ny, py());
    if (ju != NONE) {
        let k = u32(ju) * nx + i;
        r.sum += mg_faces[w + cells + j * nx + i] * mg[p + k];
        r.n += mg_faces[w + cells + j * nx + i];
    } else {
        r.n += level_edge_weight(TOP, ny, grid.ny);
    }
    return r;
}

// smooth_cell over the weighted stencil.
fn weighted_smooth_cell(nx: u32, ny: u32, b: u32, w: u32, src: u32, dst: u32, colour: u32, zero: bool, omega: f32, i: u32, j: u32) {
    let c = j * nx + i;
    let old = select(mg[src + c], 0.0, zero);
    if (((i + j) & 1u) != colour) {
        mg[dst + c] = old;
        return;
    }
    var nb = weighted_level_neighbours(src, nx, ny, w, i, j);
    if (zero) {
        nb.sum = 0.0;
    }
    mg[dst + c] = relaxed(old, nb, mg[b + c], omega);
}

// restrict_cell over the weighted stencil.
fn weighted_restrict_cell(nx: u32, ny: u32, b: u32, w: u32, p: u32, cnx: u32, cb: u32, cp: u32, ci: u32, cj: u32) {
    var r = 0.0;
    for (var k = 0u; k < 4u; k++) {
        let i = 2u * ci + (k & 1u);
        let j = 2u * cj + (k >> 1u);
        if (i < nx && j < ny) {
            let c = j * nx + i;
            let nb = weighted_level_neighbours(p, nx, ny, w, i, j);
            r += mg[b + c] - (nb.n * mg[p + c] - nb.sum);
        }
    }
    let c = cj * cnx + ci;
    mg[cb + c] = r;
    mg[cp + c] = 0.0;
}
