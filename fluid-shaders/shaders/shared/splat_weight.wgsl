// The falloff weight of splat s at point p (world units); distances wrap on periodic axes.

fn wrap_distance(d: f32, len: f32, periodic: bool) -> f32 {
    let a = abs(d);
    return select(a, min(a, len - a), periodic);
}

fn weight(s: SplatGpu, p: vec2<f32>) -> f32 {
    let dx = wrap_distance(p.x - s.center.x, f32(grid.nx) * grid.h, px());
    let dy = wrap_distance(p.y - s.center.y, f32(grid.ny) * grid.h, py());
    let d2 = dx * dx + dy * dy;
    if (s.falloff == FALLOFF_GAUSSIAN) {
        let x = d2 / (s.radius * s.radius);
        return select(0.0, exp(-x), x < GAUSSIAN_CUTOFF * GAUSSIAN_CUTOFF);
    }
    if (s.falloff == FALLOFF_CONSTANT) {
        return select(0.0, 1.0, d2 < s.radius * s.radius);
    }
    return max(1.0 - sqrt(d2) / s.radius, 0.0);
}
