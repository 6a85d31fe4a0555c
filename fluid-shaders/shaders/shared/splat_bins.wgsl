// Splats binned per workgroup: an invocation adds up only the splats that reach its
// workgroup's box, not every splat of the step. The workgroup takes the splats in chunks of
// one per invocation: each tests its splat's reach against the box, then the first lists the
// hits in order, so every sample adds its splats in the order of the list, as before binning
// (a splat left out weighs nothing there). Every invocation of the workgroup must call
// `bin_splats` (it holds barriers), in-range or not.

const SPLAT_CHUNK: u32 = WG_X * WG_Y;

// A chunk's flags, then the indices of its splats that reach the box.
var<workgroup> chunk_hits: array<u32, SPLAT_CHUNK>;
var<workgroup> chunk_count: u32;

// Beyond this distance from its centre a splat weighs nothing (`weight`).
fn splat_reach(s: SplatGpu) -> f32 {
    return select(s.radius, s.radius * GAUSSIAN_CUTOFF, s.falloff == FALLOFF_GAUSSIAN);
}

// The splats `base ..< base + SPLAT_CHUNK` that may weigh anything in the box `lo..hi` (world
// units, samples within one cell of it included): their indices in `chunk_hits[0 ..< n]`,
// ascending; returns `n`, the same in every invocation. `lane` is the local invocation index.
fn bin_splats(base: u32, lane: u32, lo: vec2<f32>, hi: vec2<f32>) -> u32 {
    let k = base + lane;
    var hit = 0u;
    if (k < inputs.splat_count) {
        let s = splats[k];
        let centre = 0.5 * (lo + hi);
        let half = 0.5 * (hi - lo) + vec2<f32>(splat_reach(s) + grid.h);
        let dx = wrap_distance(s.center.x - centre.x, f32(grid.nx) * grid.h, px());
        let dy = wrap_distance(s.center.y - centre.y, f32(grid.ny) * grid.h, py());
        hit = select(0u, 1u, dx <= half.x && dy <= half.y);
    }
    chunk_hits[lane] = hit;
    workgroupBarrier();
    if (lane == 0u) {
        // In place: entry q is read before anything is written there.
        var n = 0u;
        for (var q = 0u; q < SPLAT_CHUNK; q++) {
            if (chunk_hits[q] != 0u) {
                chunk_hits[n] = base + q;
                n++;
            }
        }
        chunk_count = n;
    }
    return workgroupUniformLoad(&chunk_count);
}
