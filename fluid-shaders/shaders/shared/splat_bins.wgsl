// Splats binned per workgroup: an invocation adds up only the splats that reach its
// workgroup's box, not every splat of the step. The workgroup takes the splats in chunks of
// one per invocation: each tests its splat's reach against the box, then the hits are listed
// in order (by the first invocation for a few, else by a prefix sum over the workgroup), so
// every sample adds its splats in the order of the list, as before binning (a splat left out
// weighs nothing there). Every invocation of the workgroup must call `bin_splats` (it holds
// barriers), in-range or not.

const SPLAT_CHUNK: u32 = WG_X * WG_Y;

// The indices of a chunk's splats that reach the box; the prefix sum of its hits.
var<workgroup> chunk_hits: array<u32, SPLAT_CHUNK>;
var<workgroup> chunk_sum: array<u32, SPLAT_CHUNK>;
var<workgroup> chunk_count: u32;

// Up to this many splats in a chunk, the first invocation lists the hits alone; past it the
// workgroup's prefix sum (two barriers a doubling) costs less.
const SPLAT_SERIAL: u32 = 32u;

// Beyond this distance from its centre a splat weighs nothing (`weight`).
fn splat_reach(s: SplatGpu) -> f32 {
    return select(s.radius, s.radius * GAUSSIAN_CUTOFF, s.falloff == FALLOFF_GAUSSIAN);
}

// The splats `base ..< base + SPLAT_CHUNK` that may weigh anything in the box of workgroup
// `tile` over samples `cell` apart (world units; samples within one flow cell of it
// included): their indices in `chunk_hits[0 ..< n]`, ascending; returns `n`, the same in every
// invocation. `lane` is the local invocation index.
fn bin_splats(base: u32, lane: u32, tile: vec2<u32>, cell: f32) -> u32 {
    let k = base + lane;
    var hit = 0u;
    if (k < inputs.records) {
        let s = splats[k];
        let size = vec2<f32>(f32(WG_X), f32(WG_Y)) * cell;
        let centre = (vec2<f32>(tile) + 0.5) * size;
        let half = 0.5 * size + vec2<f32>(splat_reach(s) + grid.h);
        let dx = wrap_distance(s.center.x - centre.x, f32(grid.nx) * grid.h, px());
        let dy = wrap_distance(s.center.y - centre.y, f32(grid.ny) * grid.h, py());
        hit = select(0u, 1u, dx <= half.x && dy <= half.y);
    }
    // The chunk's splat count is the same in every invocation, so either branch is taken by
    // all, barriers included.
    let m = min(SPLAT_CHUNK, inputs.records - base);
    if (m <= SPLAT_SERIAL) {
        chunk_hits[lane] = hit;
        workgroupBarrier();
        if (lane == 0u) {
            // In place: entry q is read before anything is written there.
            var n = 0u;
            for (var q = 0u; q < m; q++) {
                if (chunk_hits[q] != 0u) {
                    chunk_hits[n] = base + q;
                    n++;
                }
            }
            chunk_count = n;
        }
        return workgroupUniformLoad(&chunk_count);
    }
    // Inclusive prefix sum of the hits (Hillis and Steele); a hit's sum is its place + 1.
    chunk_sum[lane] = hit;
    workgroupBarrier();
    for (var step = 1u; step < SPLAT_CHUNK; step <<= 1u) {
        var add = 0u;
        if (lane >= step) {
            add = chunk_sum[lane - step];
        }
        workgroupBarrier();
        chunk_sum[lane] += add;
        workgroupBarrier();
    }
    if (hit != 0u) {
        chunk_hits[chunk_sum[lane] - 1u] = k;
    }
    if (lane == SPLAT_CHUNK - 1u) {
        chunk_count = chunk_sum[lane];
    }
    return workgroupUniformLoad(&chunk_count);
}
