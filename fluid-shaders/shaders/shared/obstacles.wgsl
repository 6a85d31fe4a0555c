// Shared by the kernels that walk the obstacle table (`obstacles`, bound as
// array<vec4<f32>>; swirly_core::grid::solid::table): per obstacle [shape, a, b, bound],
// [x, y, angle, since], [vx, vy, w, extra], [held, temperature, 0, 0], then `extra` rows: a
// polygon's points, or a mask's [width, height, 0, 0] and its distances, four to a row. The
// signed distance to each shape, where each stands at a time, the nearest at a point (twin of
// swirly_core::grid::solid).

// TABLE_HEADER, the rows of an obstacle's header, is in params.wgsl.
const SHAPE_CIRCLE: f32 = 0.0;
const SHAPE_RECT: f32 = 1.0;
const SHAPE_CAPSULE: f32 = 2.0;
const SHAPE_MASK: f32 = 4.0;

// Distance k of the mask whose entry starts at row `at` (after its [width, height] row).
fn mask_sdf(at: u32, k: u32) -> f32 {
    let row = obstacles[at + TABLE_HEADER + 1u + k / 4u];
    return row[k % 4u];
}

// A mask's signed distance at p (twin of swirly_core::grid::solid::mask_distance): its pixels'
// distances bilinear at p's place in the image, clamped to its edge, plus the distance to its
// rectangle outside it.
fn mask_distance(at: u32, p: vec2<f32>) -> f32 {
    let hs = obstacles[at].yz;
    let dims = obstacles[at + TABLE_HEADER];
    let w = u32(dims.x);
    let h = u32(dims.y);
    let fx = (p.x + hs.x) / (2.0 * hs.x) * f32(w) - 0.5;
    let fy = (hs.y - p.y) / (2.0 * hs.y) * f32(h) - 0.5;
    let cx = min(max(fx, 0.0), f32(w - 1u));
    let cy = min(max(fy, 0.0), f32(h - 1u));
    let x0 = u32(cx);
    let y0 = u32(cy);
    let x1 = min(x0 + 1u, w - 1u);
    let y1 = min(y0 + 1u, h - 1u);
    let tx = cx - f32(x0);
    let ty = cy - f32(y0);
    let s00 = mask_sdf(at, y0 * w + x0);
    let s01 = mask_sdf(at, y1 * w + x0);
    let a = s00 + (mask_sdf(at, y0 * w + x1) - s00) * tx;
    let b = s01 + (mask_sdf(at, y1 * w + x1) - s01) * tx;
    let inside = a + (b - a) * ty;
    let d = vec2<f32>(abs(p.x) - hs.x, abs(p.y) - hs.y);
    let outside = len2d(vec2<f32>(max(d.x, 0.0), max(d.y, 0.0)));
    if (outside > 0.0) {
        return outside + max(inside, 0.0);
    }
    return inside;
}

fn segment_distance_sq(p: vec2<f32>, a: vec2<f32>, b: vec2<f32>) -> f32 {
    let ab = b - a;
    let ap = p - a;
    let len2 = ab.x * ab.x + ab.y * ab.y;
    var t = 0.0;
    if (len2 > 0.0) {
        t = clamp((ap.x * ab.x + ap.y * ab.y) / len2, 0.0, 1.0);
    }
    let d = vec2<f32>(ap.x - t * ab.x, ap.y - t * ab.y);
    return d.x * d.x + d.y * d.y;
}

fn len2d(p: vec2<f32>) -> f32 {
    return sqrt(p.x * p.x + p.y * p.y);
}

// Signed distance from p (in the shape's frame) to the outline of the obstacle at row `at`.
fn local_distance(at: u32, p: vec2<f32>) -> f32 {
    let head = obstacles[at];
    let code = head.x;
    if (code == SHAPE_CIRCLE) {
        return len2d(p) - head.y;
    }
    if (code == SHAPE_RECT) {
        let d = vec2<f32>(abs(p.x) - head.y, abs(p.y) - head.z);
        return len2d(vec2<f32>(max(d.x, 0.0), max(d.y, 0.0))) + min(max(d.x, d.y), 0.0);
    }
    if (code == SHAPE_CAPSULE) {
        return len2d(vec2<f32>(p.x - clamp(p.x, -head.y, head.y), p.y)) - head.z;
    }
    if (code == SHAPE_MASK) {
        return mask_distance(at, p);
    }
    // A polygon: the nearest edge, inside by the even-odd rule along +x.
    let n = u32(obstacles[at + 2u].w);
    let first = at + TABLE_HEADER;
    var d2 = 1e38;
    var inside = false;
    for (var k = 0u; k < n; k++) {
        let a = obstacles[first + k].xy;
        let b = obstacles[first + select(k + 1u, 0u, k + 1u == n)].xy;
        d2 = min(d2, segment_distance_sq(p, a, b));
        if ((a.y > p.y) != (b.y > p.y)) {
            let x = a.x + (p.y - a.y) / (b.y - a.y) * (b.x - a.x);
            if (p.x < x) {
                inside = !inside;
            }
        }
    }
    return select(sqrt(d2), -sqrt(d2), inside);
}

struct Placed {
    position: vec2<f32>,
    angle: f32,
}

// Where the obstacle at row `at` stands at time t.
fn placed(at: u32, t: f32) -> Placed {
    let pose = obstacles[at + 1u];
    let motion = obstacles[at + 2u];
    let dt = t - pose.w;
    var r: Placed;
    r.position = vec2<f32>(pose.x + motion.x * dt, pose.y + motion.y * dt);
    r.angle = pose.z + motion.z * dt;
    return r;
}

// How far outside an obstacle's bounding disc its distance is still measured exactly: two
// cells, or more where a kernel sets this (the particles' reach of stickiness).
var<private> exact_within: f32 = 0.0;

// Signed distance from world point p to the obstacle at row `at` placed at `q`; skipped (its
// bounding disc's distance, a lower bound) when p is more than two cells (or `exact_within`)
// outside that disc.
fn distance_to(at: u32, q: Placed, p: vec2<f32>) -> f32 {
    let r = vec2<f32>(p.x - q.position.x, p.y - q.position.y);
    let far = len2d(r) - obstacles[at].w;
    if (far > max(2.0 * grid.h, exact_within)) {
        return far;
    }
    let s = sin(q.angle);
    let c = cos(q.angle);
    return local_distance(at, vec2<f32>(c * r.x + s * r.y, c * r.y - s * r.x));
}

struct Nearest {
    d: f32,
    at: u32,
    found: bool,
}

// The signed distance at p to the union of the obstacles and the one nearest; along a
// periodic axis each also stands one box length to either side (shifts 0, -L, +L).
fn nearest(p: vec2<f32>, t: f32) -> Nearest {
    var best: Nearest;
    best.d = 1e38;
    best.at = 0u;
    best.found = false;
    let rows = arrayLength(&obstacles);
    let w = f32(grid.nx) * grid.h;
    let hgt = f32(grid.ny) * grid.h;
    let nsx = select(1u, 3u, px());
    let nsy = select(1u, 3u, py());
    var at = 0u;
    loop {
        if (at + TABLE_HEADER > rows) {
            break;
        }
        let q = placed(at, t);
        for (var sx = 0u; sx < nsx; sx++) {
            let dx = select(select(w, -w, sx == 1u), 0.0, sx == 0u);
            for (var sy = 0u; sy < nsy; sy++) {
                let dy = select(select(hgt, -hgt, sy == 1u), 0.0, sy == 0u);
                let d = distance_to(at, q, vec2<f32>(p.x + dx, p.y + dy));
                if (d < best.d) {
                    best.d = d;
                    best.at = at;
                    best.found = true;
                }
            }
        }
        // The rows after the header: a polygon's points, a mask's size and distances.
        let points = select(0u, u32(obstacles[at + 2u].w), obstacles[at].x >= 3.0);
        at += TABLE_HEADER + points;
    }
    return best;
}

// Velocity of the solid material of the obstacle at row `at` at world point p, time t.
fn solid_velocity(at: u32, t: f32, p: vec2<f32>) -> vec2<f32> {
    let q = placed(at, t);
    let m = obstacles[at + 2u];
    let r = p - q.position;
    return vec2<f32>(m.x - m.z * r.y, m.y + m.z * r.x);
}
