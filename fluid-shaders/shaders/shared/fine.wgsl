// A cell of a field on a grid `f` times finer than the velocity's along each axis (the finer
// dye and density): where its centre came from, and the bilinear stencil there.

// Fine cell (i, j)'s centre traced back along the velocity over the step, in the velocity
// grid's cell units (as advect_channels traces every lattice cell).
fn fine_backtrace(i: u32, j: u32, f: u32, order: u32) -> vec2<f32> {
    // The velocity's own cells skip the division (the same value: x / 1 is x).
    var p = vec2<f32>(f32(i) + 0.5, f32(j) + 0.5);
    if (f != 1u) {
        p = p / f32(f);
    }
    return backtrace(p, order, inputs.dt * grid.inv_h);
}

// The four fine cells round b (velocity cell units) and the weights of the second along x, y.
struct FineStencil {
    i00: u32,
    i10: u32,
    i01: u32,
    i11: u32,
    tx: f32,
    ty: f32,
}

fn fine_stencil(b: vec2<f32>, f: u32) -> FineStencil {
    let fx = grid.nx * f;
    let scale = f32(f);
    let sx = stencil(b.x * scale - 0.5, fx, false, px());
    let sy = stencil(b.y * scale - 0.5, grid.ny * f, false, py());
    return FineStencil(sy.i0 * fx + sx.i0, sy.i0 * fx + sx.i1, sy.i1 * fx + sx.i0, sy.i1 * fx + sx.i1, sx.t, sy.t);
}

