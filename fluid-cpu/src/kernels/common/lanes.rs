//! The batched drivers' sampling: [`LANES`] samples at a time, each lane with the arithmetic
//! of the one-sample functions.

use super::*;

/// Samples processed together by the batched drivers. Backtraces are long dependent chains
/// (position → stencil → loads → position …); interleaving independent samples lets the CPU
/// overlap them. Each lane does exactly the arithmetic of the one-sample functions.
pub const LANES: usize = 8;

/// [`stencil`] of [`LANES`] coordinates: `(i0, i1, t)` per lane. On a wall axis written so
/// that it vectorises; the same arithmetic lane by lane.
#[inline(always)]
pub fn stencil_lanes(
    g: &[f32; LANES],
    n: usize,
    faces: bool,
    periodic: bool,
) -> ([i32; LANES], [i32; LANES], [f32; LANES]) {
    let mut i0 = [0i32; LANES];
    let mut i1 = [0i32; LANES];
    let mut t = [0f32; LANES];
    if periodic {
        let (nf, ni) = (n as f32, n as i32);
        // Coordinates within a period of the domain (n ≤ 2^15, so far below 2^22): the floor by
        // `floor_small` and the wrap by selects, which vectorise; anything else (far out, NaN)
        // one lane at a time.
        if g.iter().all(|&x| x >= -nf && x < 2.0 * nf) {
            for k in 0..LANES {
                let fl = floor_small(g[k]);
                t[k] = g[k] - fl as f32;
                let a = if fl < 0 {
                    fl + ni
                } else if fl >= ni {
                    fl - ni
                } else {
                    fl
                };
                i0[k] = a;
                i1[k] = if !faces && a + 1 == ni { 0 } else { a + 1 };
            }
        } else {
            for k in 0..LANES {
                let (a, b, w) = stencil(g[k], n, faces, true);
                (i0[k], i1[k], t[k]) = (a as i32, b as i32, w);
            }
        }
        return (i0, i1, t);
    }
    let last = if faces { n } else { n - 1 };
    let (lastf, lasti, m) = (last as f32, last as i32, last.max(1) as i32 - 1);
    for k in 0..LANES {
        let x = clampf(g[k], 0.0, lastf);
        let a = trunc_small(x).min(m);
        i0[k] = a;
        i1[k] = (a + 1).min(lasti);
        t[k] = x - a as f32;
    }
    (i0, i1, t)
}

/// Bilinear sample at [`LANES`] coordinates `(gx, gy)` (in sample units) of a field with
/// `stride` values per row, on an axis pair with walls only: stencils for all lanes first
/// (vectorised), then the loads, then the interpolation — the arithmetic of [`stencil`] and
/// [`bilerp`] lane by lane.
#[inline(always)]
fn bilerp_lanes_walls(
    data: &[f32],
    stride: usize,
    (nx, x_faces): (usize, bool),
    (ny, y_faces): (usize, bool),
    gx: &[f32; LANES],
    gy: &[f32; LANES],
) -> [f32; LANES] {
    // With a single sample along an axis (a grid one cell wide) the stencils are not windows.
    if !((x_faces || nx > 1) && (y_faces || ny > 1)) {
        return std::array::from_fn(|k| {
            bilerp(data, stride, 1, 0, stencil(gx[k], nx, x_faces, false), stencil(gy[k], ny, y_faces, false))
        });
    }
    // Phase 1 (vectorised): stencils. Every stencil is the 2 × 2 window at its first sample
    // (see `stencil`).
    let (i0, _, tx) = stencil_lanes(gx, nx, x_faces, false);
    let (j0, _, ty) = stencil_lanes(gy, ny, y_faces, false);
    bilerp_windows(data, stride, (&i0, &tx), (&j0, &ty))
}

/// [`bilerp`] at [`LANES`] wall stencils `(i0, i0 + 1, tx)`, `(j0, j0 + 1, ty)` of a field with
/// `stride` values per row (the stencils of an axis with two samples or more, see `stencil`):
/// each lane reads the 2 × 2 window at `(i0, j0)`, one bounds check per lane, then all lanes
/// interpolate in `bilerp`'s order.
#[inline(always)]
pub fn bilerp_windows(
    data: &[f32],
    stride: usize,
    (i0, tx): (&[i32; LANES], &[f32; LANES]),
    (j0, ty): (&[i32; LANES], &[f32; LANES]),
) -> [f32; LANES] {
    let stride_i = stride as i32;
    let base: [i32; LANES] = std::array::from_fn(|k| j0[k] * stride_i + i0[k]);
    // The loads, one bounds check per sample.
    let mut c00 = [0f32; LANES];
    let mut c10 = [0f32; LANES];
    let mut c01 = [0f32; LANES];
    let mut c11 = [0f32; LANES];
    for k in 0..LANES {
        let w = &data[base[k] as usize..][..stride + 2];
        (c00[k], c10[k], c01[k], c11[k]) = (w[0], w[1], w[stride], w[stride + 1]);
    }
    // Interpolation (vectorised), in the order `bilerp` uses.
    let mut out = [0f32; LANES];
    for k in 0..LANES {
        let a = c00[k] + (c10[k] - c00[k]) * tx[k];
        let b = c01[k] + (c11[k] - c01[k]) * tx[k];
        out[k] = a + (b - a) * ty[k];
    }
    out
}

/// Velocity at [`LANES`] positions (cell units).
#[inline(always)]
pub fn velocity_lanes(g: &G, u: &[f32], v: &[f32], x: &[f32; LANES], y: &[f32; LANES]) -> ([f32; LANES], [f32; LANES]) {
    (sample_u_lanes(g, u, x, y), sample_v_lanes(g, v, x, y))
}

/// [`bilerp`] at [`LANES`] stencils of any kind (wrapping ones included) of a field with
/// `stride` values per row: four loads per lane, then all lanes interpolate in `bilerp`'s order.
#[inline(always)]
pub fn bilerp_stencils(
    data: &[f32],
    stride: usize,
    (i0, i1, tx): &([i32; LANES], [i32; LANES], [f32; LANES]),
    (j0, j1, ty): &([i32; LANES], [i32; LANES], [f32; LANES]),
) -> [f32; LANES] {
    let mut c = [[0f32; LANES]; 4];
    for k in 0..LANES {
        let (r0, r1) = (j0[k] as usize * stride, j1[k] as usize * stride);
        let (a0, a1) = (i0[k] as usize, i1[k] as usize);
        (c[0][k], c[1][k], c[2][k], c[3][k]) = (data[r0 + a0], data[r0 + a1], data[r1 + a0], data[r1 + a1]);
    }
    std::array::from_fn(|k| {
        let a = c[0][k] + (c[1][k] - c[0][k]) * tx[k];
        let b = c[2][k] + (c[3][k] - c[2][k]) * tx[k];
        a + (b - a) * ty[k]
    })
}

/// [`sample_u`] at [`LANES`] positions.
#[inline(always)]
pub fn sample_u_lanes(g: &G, u: &[f32], x: &[f32; LANES], y: &[f32; LANES]) -> [f32; LANES] {
    let gy: [f32; LANES] = std::array::from_fn(|k| y[k] - 0.5);
    if g.px || g.py {
        let (sx, sy) = (stencil_lanes(x, g.nx, true, g.px), stencil_lanes(&gy, g.ny, false, g.py));
        return bilerp_stencils(u, g.nx + 1, &sx, &sy);
    }
    bilerp_lanes_walls(u, g.nx + 1, (g.nx, true), (g.ny, false), x, &gy)
}

/// [`sample_v`] at [`LANES`] positions.
#[inline(always)]
pub fn sample_v_lanes(g: &G, v: &[f32], x: &[f32; LANES], y: &[f32; LANES]) -> [f32; LANES] {
    let gx: [f32; LANES] = std::array::from_fn(|k| x[k] - 0.5);
    if g.px || g.py {
        let (sx, sy) = (stencil_lanes(&gx, g.nx, false, g.px), stencil_lanes(y, g.ny, true, g.py));
        return bilerp_stencils(v, g.nx, &sx, &sy);
    }
    bilerp_lanes_walls(v, g.nx, (g.nx, false), (g.ny, true), &gx, y)
}

/// `a + (b − a)·t` per lane, the arithmetic of [`bilerp`]'s interpolation.
#[inline(always)]
fn lerp_lanes(a: &[f32], b: &[f32], t: f32) -> [f32; LANES] {
    std::array::from_fn(|k| a[k] + (b[k] - a[k]) * t)
}

/// [`bilerp`] with fixed weights of `LANES` consecutive samples of two rows: lane `k`
/// interpolates `r0[k]`, `r0[k + 1]`, `r1[k]`, `r1[k + 1]`.
#[inline(always)]
fn bilerp_rows(r0: &[f32], r1: &[f32], tx: f32, ty: f32) -> [f32; LANES] {
    let (r0, r1) = (&r0[..=LANES], &r1[..=LANES]);
    let a = lerp_lanes(&r0[..LANES], &r0[1..], tx);
    let b = lerp_lanes(&r1[..LANES], &r1[1..], tx);
    lerp_lanes(&a, &b, ty)
}

/// The velocity at the `LANES` u-faces `(i0 .. i0 + LANES, j)`, whose positions (cell units)
/// are `(x[k], y)`: the first stage of their backtrace, [`velocity`] there bit for bit. Those
/// positions are whole or half cells, so every stencil is known; away from the edges the
/// samples are consecutive in memory and the lanes load them as slices instead of gathering.
#[inline(always)]
pub fn velocity_at_u_faces(
    g: &G,
    u: &[f32],
    v: &[f32],
    (i0, j): (usize, usize),
    x: &[f32; LANES],
    y: f32,
) -> ([f32; LANES], [f32; LANES]) {
    if i0 >= 1 && i0 + LANES <= g.nx && j + 1 < g.ny {
        let (su, sv) = (g.nx + 1, g.nx);
        let ku = bilerp_rows(&u[j * su + i0..], &u[(j + 1) * su + i0..], 0.0, 0.0);
        let kv = bilerp_rows(&v[j * sv + i0 - 1..], &v[(j + 1) * sv + i0 - 1..], 0.5, 0.5);
        return (ku, kv);
    }
    velocity_lanes(g, u, v, x, &[y; LANES])
}

/// The velocity at the `LANES` v-faces `(i0 .. i0 + LANES, j)`, as [`velocity_at_u_faces`].
#[inline(always)]
pub fn velocity_at_v_faces(
    g: &G,
    u: &[f32],
    v: &[f32],
    (i0, j): (usize, usize),
    x: &[f32; LANES],
    y: f32,
) -> ([f32; LANES], [f32; LANES]) {
    if i0 + LANES < g.nx && j >= 1 && j < g.ny {
        let (su, sv) = (g.nx + 1, g.nx);
        let ku = bilerp_rows(&u[(j - 1) * su + i0..], &u[j * su + i0..], 0.5, 0.5);
        let kv = bilerp_rows(&v[j * sv + i0..], &v[(j + 1) * sv + i0..], 0.0, 0.0);
        return (ku, kv);
    }
    velocity_lanes(g, u, v, x, &[y; LANES])
}

/// The velocity at the `LANES` cell centres `(i0 .. i0 + LANES, j)`, as
/// [`velocity_at_u_faces`].
#[inline(always)]
pub fn velocity_at_cells(
    g: &G,
    u: &[f32],
    v: &[f32],
    (i0, j): (usize, usize),
    x: &[f32; LANES],
    y: f32,
) -> ([f32; LANES], [f32; LANES]) {
    if i0 + LANES < g.nx && j + 1 < g.ny {
        let (su, sv) = (g.nx + 1, g.nx);
        let ku = bilerp_rows(&u[j * su + i0..], &u[(j + 1) * su + i0..], 0.5, 0.0);
        let kv = bilerp_rows(&v[j * sv + i0..], &v[(j + 1) * sv + i0..], 0.0, 0.5);
        return (ku, kv);
    }
    velocity_lanes(g, u, v, x, &[y; LANES])
}

/// [`backtrace`] for [`LANES`] independent positions `(x, y)` (cell units), stage by stage,
/// given the first stage's velocity `k1` (the velocity at `(x, y)`).
#[inline(always)]
pub fn backtrace_lanes(
    g: &G,
    u: &[f32],
    v: &[f32],
    order: u32,
    s: f32,
    x: &[f32; LANES],
    y: &[f32; LANES],
    k1: ([f32; LANES], [f32; LANES]),
) -> ([f32; LANES], [f32; LANES]) {
    let step = |px: &[f32; LANES], ku: &[f32; LANES], c: f32| -> [f32; LANES] {
        std::array::from_fn(|k| px[k] - c * s * ku[k])
    };
    match order {
        1 => (std::array::from_fn(|k| x[k] - s * k1.0[k]), std::array::from_fn(|k| y[k] - s * k1.1[k])),
        2 => {
            let k2 = velocity_lanes(g, u, v, &step(x, &k1.0, 0.5), &step(y, &k1.1, 0.5));
            (std::array::from_fn(|k| x[k] - s * k2.0[k]), std::array::from_fn(|k| y[k] - s * k2.1[k]))
        }
        _ => {
            let k2 = velocity_lanes(g, u, v, &step(x, &k1.0, 0.5), &step(y, &k1.1, 0.5));
            let k3 = velocity_lanes(g, u, v, &step(x, &k2.0, 0.75), &step(y, &k2.1, 0.75));
            (
                std::array::from_fn(|k| x[k] - s * (2.0 / 9.0 * k1.0[k] + 3.0 / 9.0 * k2.0[k] + 4.0 / 9.0 * k3.0[k])),
                std::array::from_fn(|k| y[k] - s * (2.0 / 9.0 * k1.1[k] + 3.0 / 9.0 * k2.1[k] + 4.0 / 9.0 * k3.1[k])),
            )
        }
    }
}
