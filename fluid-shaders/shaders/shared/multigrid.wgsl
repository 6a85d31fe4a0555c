// Shared by the multigrid kernels (which bind the packed hierarchy as `mg`): the unscaled
// Poisson stencil on one level, in the CPU's order (left, right, down, up) (twin of
// `level_neighbours` in fluid-cpu/src/kernels/common/mod.rs), and the per-cell work of
// `mg_smooth`, `mg_restrict` and `mg_prolong`, which `mg_coarse` loops over in one workgroup.

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

// One red-black colour pass at cell (i, j) of a level of nx x ny cells whose right-hand side
// starts at b: from the iterate at src into dst, over-relaxed by omega; cells of the other
// colour are copied; `zero`: the iterate is taken as zero (twin of mg_smooth.rs).
fn smooth_cell(nx: u32, ny: u32, b: u32, src: u32, dst: u32, colour: u32, zero: bool, omega: f32, i: u32, j: u32) {
    let c = j * nx + i;
    let old = select(mg[src + c], 0.0, zero);
    if (((i + j) & 1u) != colour) {
        mg[dst + c] = old;
        return;
    }
    var nb = level_neighbours(src, nx, ny, i, j);
    if (zero) {
        nb.sum = 0.0;
    }
    mg[dst + c] = relaxed(old, nb, mg[b + c], omega);
}

// The over-relaxed Gauss-Seidel value of a cell whose iterate is `old`, neighbours `nb` and
// right-hand side `rhs` (`old` itself where the cell has no neighbour).
fn relaxed(old: f32, nb: LevelSum, rhs: f32, omega: f32) -> f32 {
    if (nb.n == 0.0) {
        return old;
    }
    let pj = (nb.sum + rhs) / nb.n;
    return old + omega * (pj - old);
}

// The residual b - A p at fine cell (i, j).
fn residual_at(nx: u32, ny: u32, b: u32, p: u32, i: u32, j: u32) -> f32 {
    let c = j * nx + i;
    let nb = level_neighbours(p, nx, ny, i, j);
    return mg[b + c] - (nb.n * mg[p + c] - nb.sum);
}

// Coarse cell (ci, cj) of a coarser level (cnx wide, arrays cb, cp): the fine level's residual
// summed over the cell's (up to four) children in the order (0,0), (1,0), (0,1), (1,1), into
// the coarse b; the coarse p set to zero (twin of mg_restrict.rs).
fn restrict_cell(nx: u32, ny: u32, b: u32, p: u32, cnx: u32, cb: u32, cp: u32, ci: u32, cj: u32) {
    var r = 0.0;
    for (var k = 0u; k < 4u; k++) {
        let i = 2u * ci + (k & 1u);
        let j = 2u * cj + (k >> 1u);
        if (i < nx && j < ny) {
            r += residual_at(nx, ny, b, p, i, j);
        }
    }
    let c = cj * cnx + ci;
    mg[cb + c] = r;
    mg[cp + c] = 0.0;
}

// The coarse cell beside fine cell i's parent c, on the side of i (walls: the parent again;
// periodic axes wrap).
fn beside(i: u32, c: u32, n: u32, periodic: bool) -> u32 {
    if ((i & 1u) == 0u) {
        if (c > 0u) {
            return c - 1u;
        }
        return select(c, n - 1u, periodic);
    }
    if (c + 1u < n) {
        return c + 1u;
    }
    return select(c, 0u, periodic);
}

// Fine cell (i, j) of a level (nx wide, iterate p): p += the coarse correction (cnx x cny,
// at cp) interpolated bilinearly between cell centres, 9/16 parent, 3/16 each side neighbour,
// 1/16 diagonal (twin of mg_prolong.rs).
fn prolong_cell(nx: u32, p: u32, cnx: u32, cny: u32, cp: u32, i: u32, j: u32) {
    let c = j * nx + i;
    mg[p + c] = mg[p + c] + prolong_correction(cnx, cny, cp, i, j);
}

// The correction prolonged to fine cell (i, j) from the coarse level (cnx x cny, at cp).
fn prolong_correction(cnx: u32, cny: u32, cp: u32, i: u32, j: u32) -> f32 {
    let ci = i / 2u;
    let cj = j / 2u;
    let ci2 = beside(i, ci, cnx, px());
    let cj2 = beside(j, cj, cny, py());
    let e00 = mg[cp + cj * cnx + ci];
    let e10 = mg[cp + cj * cnx + ci2];
    let e01 = mg[cp + cj2 * cnx + ci];
    let e11 = mg[cp + cj2 * cnx + ci2];
    return 0.75 * (0.75 * e00 + 0.25 * e10) + 0.25 * (0.75 * e01 + 0.25 * e11);
}
