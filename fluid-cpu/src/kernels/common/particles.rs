//! What the particle kernels share (twin of `shaders/shared/particles.wgsl`): a position's hash
//! cell, the runs of sorted slots a particle's neighbours lie in, and a pair's direction.

/// The hash cell of `p`: `floor(p / side)` clamped into the hash, row by row from the bottom.
#[inline(always)]
pub fn cell_of(p: [f32; 2], inv_cell: f32, cells_x: u32, cells_y: u32) -> u32 {
    let cx = ((p[0] * inv_cell).floor().max(0.0) as u32).min(cells_x - 1);
    let cy = ((p[1] * inv_cell).floor().max(0.0) as u32).min(cells_y - 1);
    cy * cells_x + cx
}

/// The runs of slots `[start, end)` of the (up to) three rows of three hash cells about `cell`:
/// the cells of a row are consecutive, so each row is one run of the sorted particles.
#[inline(always)]
pub fn neighbour_runs(cell: u32, cells_x: u32, cells_y: u32, starts: &[u32]) -> impl Iterator<Item = (u32, u32)> + '_ {
    let (cx, cy) = (cell % cells_x, cell / cells_x);
    let x0 = cx.saturating_sub(1);
    let x1 = (cx + 1).min(cells_x - 1);
    let y0 = cy.saturating_sub(1);
    let y1 = (cy + 1).min(cells_y - 1);
    (y0..=y1).map(move |y| (starts[(y * cells_x + x0) as usize], starts[(y * cells_x + x1 + 1) as usize]))
}

/// The unit vector from particle `i` at `xi` to particle `j` at `xj`, `r = xj − xi`, and their
/// distance `d` (with `d > 0`); two particles at one point take ±x, by their slots, so the
/// pair's terms stay equal and opposite.
#[inline(always)]
pub fn direction(r: [f32; 2], d: f32, i: u32, j: u32) -> [f32; 2] {
    if d > 0.0 {
        [r[0] / d, r[1] / d]
    } else if j > i {
        [1.0, 0.0]
    } else {
        [-1.0, 0.0]
    }
}

/// `x` as `u32` words.
pub fn words(x: &[f32]) -> &[u32] {
    bytemuck::cast_slice(x)
}

/// `x` as `u32` words, to write.
pub fn words_mut(x: &mut [f32]) -> &mut [u32] {
    bytemuck::cast_slice_mut(x)
}

/// `x` as `[x, y]` pairs.
pub fn pairs(x: &[f32]) -> &[[f32; 2]] {
    bytemuck::cast_slice(x)
}

/// `x` as `[x, y]` pairs, to write.
pub fn pairs_mut(x: &mut [f32]) -> &mut [[f32; 2]] {
    bytemuck::cast_slice_mut(x)
}
