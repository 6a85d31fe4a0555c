// Shared by the kernels that bind `u_faces` and `v_faces` (the open fraction of each face and
// the solid's velocity there; bound only when grid.solids is 1): the faces' weights and fluxes
// (twin of fluid-cpu/src/kernels/common/solid.rs).

// Open fraction of x-face (i, j) / y-face (i, j): 1 without obstacles.
fn u_open(i: u32, j: u32) -> f32 {
    if (grid.solids == 0u) {
        return 1.0;
    }
    return u_faces[ui_(i, j)].x;
}
fn v_open(i: u32, j: u32) -> f32 {
    if (grid.solids == 0u) {
        return 1.0;
    }
    return v_faces[vi_(i, j)].x;
}

// What crosses x-face (i, j) whose fluid velocity is `vel`: the open part carries the fluid,
// the closed part the solid's velocity (Batty, Bertails & Bridson 2007).
fn u_flux(vel: f32, i: u32, j: u32) -> f32 {
    let f = u_faces[ui_(i, j)];
    return f.x * vel + (1.0 - f.x) * f.y;
}
fn v_flux(vel: f32, i: u32, j: u32) -> f32 {
    let f = v_faces[vi_(i, j)];
    return f.x * vel + (1.0 - f.x) * f.y;
}

// The open part of cell (i, j): the mean open fraction of its four faces.
fn cell_open(i: u32, j: u32) -> f32 {
    return 0.25 * ((u_open(i, j) + u_open(i + 1u, j)) + (v_open(i, j) + v_open(i, j + 1u)));
}
