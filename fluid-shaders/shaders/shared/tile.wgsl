// Shared by the tiled kernels (jacobi_multisweep, mg_smooth2), whose tiles reach past the grid:
// a coordinate wrapped onto a periodic axis of n cells, and the number of neighbours along an
// axis of n cells of the cell at g (in the grid) — both on a periodic axis, otherwise those not
// past a wall: the count of prev/next that are not NONE.
fn wrap(x: i32, n: i32) -> i32 {
    if (x >= 0 && x < n) {
        return x;
    }
    return ((x % n) + n) % n;
}
fn axis_count(g: i32, n: i32, periodic: bool) -> f32 {
    if (periodic) {
        return 2.0;
    }
    return f32(g > 0) + f32(g + 1 < n);
}
