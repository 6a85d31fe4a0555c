// What the particle kernels share (twin of fluid-cpu/src/kernels/common/particles.rs): a
// position's hash cell, the box of hash cells about a cell, and a pair's direction (their
// parameter blocks are in params.wgsl, from fluid-core/src/particles/mod.rs).

// Threads of a particle kernel's workgroup; the prefix sum scans 4 values a thread.
const PWG: u32 = 256u;
const SCAN_BLOCK: u32 = 1024u;
// An empty entry of a spring list; a list holds [partner id, rest length bits] pairs, packed
// from its start.
const NO_SPRING: u32 = 0xffffffffu;

// The hash cell of p: floor(p / side) clamped into the hash, row by row from the bottom.
fn cell_of(p: vec2<f32>, inv_cell: f32, cells_x: u32, cells_y: u32) -> u32 {
    let f = floor(p * inv_cell);
    let cx = min(u32(max(f.x, 0.0)), cells_x - 1u);
    let cy = min(u32(max(f.y, 0.0)), cells_y - 1u);
    return cy * cells_x + cx;
}

// The hash cells about `cell`, inclusive: (x0, x1, y0, y1). A row of them is one run of the
// sorted particles, from starts[row + x0] to starts[row + x1 + 1].
fn neighbour_box(cell: u32, cells_x: u32, cells_y: u32) -> vec4<u32> {
    let cx = cell % cells_x;
    let cy = cell / cells_x;
    return vec4<u32>(
        select(cx - 1u, 0u, cx == 0u),
        min(cx + 1u, cells_x - 1u),
        select(cy - 1u, 0u, cy == 0u),
        min(cy + 1u, cells_y - 1u),
    );
}

// The unit vector from particle i to particle j, r = x_j - x_i at distance d; two at one point
// take +-x by their slots, so the pair's terms stay equal and opposite.
fn direction(r: vec2<f32>, d: f32, i: u32, j: u32) -> vec2<f32> {
    if (d > 0.0) {
        return vec2<f32>(r.x / d, r.y / d);
    }
    return select(vec2<f32>(-1.0, 0.0), vec2<f32>(1.0, 0.0), j > i);
}
