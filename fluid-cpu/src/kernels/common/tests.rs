#[test]
fn flush_subnormal_zeroes_subnormals_only() {
    for x in
        [f32::MIN_POSITIVE, -f32::MIN_POSITIVE, 1.0, -3.5e-20, f32::MAX, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0]
    {
        assert_eq!(flush_subnormal(x).to_bits(), x.to_bits(), "{x:e} is kept");
    }
    assert!(flush_subnormal(f32::NAN).is_nan());
    for x in [f32::MIN_POSITIVE / 2.0, f32::from_bits(1), 1e-40] {
        assert_eq!(flush_subnormal(x).to_bits(), 0, "{x:e} becomes +0");
        assert_eq!(flush_subnormal(-x).to_bits(), 0x8000_0000, "{:e} becomes −0", -x);
    }
}

use super::*;

#[test]
fn wall_stencils_are_windows_at_their_first_sample() {
    // Cells: the last cell is reached from the one before with t = 1; clamped beyond.
    assert_eq!(stencil(2.25, 4, false, false), (2, 3, 0.25));
    assert_eq!(stencil(3.0, 4, false, false), (2, 3, 1.0));
    assert_eq!(stencil(7.5, 4, false, false), (2, 3, 1.0));
    assert_eq!(stencil(-1.0, 4, false, false), (0, 1, 0.0));
    assert_eq!(stencil(f32::NAN, 4, false, false), (0, 1, 0.0));
    // Faces: samples 0..=n.
    assert_eq!(stencil(4.0, 4, true, false), (3, 4, 1.0));
    assert_eq!(stencil(0.5, 4, true, false), (0, 1, 0.5));
    // One cell: a single sample.
    assert_eq!(stencil(0.7, 1, false, false), (0, 0, 0.0));
    // Periodic axes wrap.
    assert_eq!(stencil(3.5, 4, false, true), (3, 0, 0.5));
    assert_eq!(stencil(-0.5, 4, false, true), (3, 0, 0.5));
    // The lanes agree with the one-sample function, periodic lanes in and beyond the
    // vectorised range too.
    let periodic = [
        [-1.0, 0.0, 0.5, 1.0, 2.75, 3.0, 3.5, 7.99],
        [-4.0, -3.999, -0.0, 3.9999998, 4.0, 5.5, -2.5e-8, 7.9999995],
        [-4.5, 0.0, 0.5, 1.0, 2.75, 3.0, 3.5, 9.0],
        [1.0e9, -3.0e7, 0.25, 1.0, 2.0, f32::NAN, 3.5, 2.0],
    ];
    for g in periodic {
        for faces in [false, true] {
            let (i0, i1, t) = stencil_lanes(&g, 4, faces, true);
            for k in 0..LANES {
                let (a, b, w) = stencil(g[k], 4, faces, true);
                assert_eq!((i0[k] as usize, i1[k] as usize, t[k].to_bits()), (a, b, w.to_bits()), "{faces} {}", g[k]);
            }
        }
    }
    for x in [-4194303.5f32, -1.5, -1.0, -0.7, -1.0e-30, 0.0, 0.3, 1.0, 2.5, 4194303.5, 100.99999] {
        assert_eq!(floor_small(x), ifloor(x), "{x}");
    }
    // A blown-up position on a periodic axis: the floor saturates (it used to overflow
    // below i32::MIN, a panic in debug builds), and the stencil still lies in the field.
    for (x, fl) in [(f32::NEG_INFINITY, i32::MIN), (-1e30, i32::MIN), (f32::INFINITY, i32::MAX), (f32::NAN, 0)] {
        assert_eq!(ifloor(x), fl, "{x}");
        for (n, faces) in [(2, false), (2, true), (7, false), (7, true)] {
            let (i0, i1, _) = stencil(x, n, faces, true);
            assert!(i0 < n && i1 <= n && (faces || i1 < n), "{x} on {n} samples ({faces}): {i0}, {i1}");
        }
    }
    let g = [-1.0, 0.0, 0.5, 1.0, 2.75, 3.0, 3.5, f32::NAN];
    for (n, faces) in [(4, false), (4, true), (1, false), (1, true)] {
        let (i0, i1, t) = stencil_lanes(&g, n, faces, false);
        for k in 0..LANES {
            let (a, b, w) = stencil(g[k], n, faces, false);
            assert_eq!((i0[k] as usize, i1[k] as usize, t[k].to_bits()), (a, b, w.to_bits()), "{n} {faces} {}", g[k]);
        }
    }
}

/// Walls repeat the end sample, periodic axes wrap, inside the step is plain.
#[test]
fn clamp_or_wrap_repeats_or_wraps_at_the_ends() {
    let n = 5;
    for (i, d, wall, periodic) in
        [(0, -1, 0, 4), (0, 0, 0, 0), (0, 1, 1, 1), (2, -1, 1, 1), (4, 1, 4, 0), (4, -1, 3, 3)]
    {
        assert_eq!(clamp_or_wrap(i, d, n, false), wall, "wall: {i} {d:+}");
        assert_eq!(clamp_or_wrap(i, d, n, true), periodic, "periodic: {i} {d:+}");
    }
    // The faces of a wall axis run 0..=n: face n + 1 repeats face n.
    assert_eq!(clamp_or_wrap(n, 1, n + 1, false), n);
}
