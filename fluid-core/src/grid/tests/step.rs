//! Tests of the step's schedules: the traffic model, the solver chunks, the dispatch counts.

use super::*;
use crate::grid::pressure::mgpcg;
use crate::grid::uniforms::{JacobiParams, MULTISWEEP_MAX};
use crate::grid::{Boundary, kernels};
use swirly_ir::kernel::Kernel;
use swirly_ir::schedule::Dispatch;

/// The traffic model that `fluid bench`'s GB/s divides by time, on schedules whose bytes
/// are known by hand (37 × 22 cells, f32): a Jacobi sweep reads pressure and divergence and
/// writes the new pressure, 3 fields; a reduction reads its field once, u with its
/// `nx + 1` faces per row; the gradient subtraction reads and writes u and v and reads both
/// pressure words.
#[test]
fn bytes_moved_counts_each_binding_once_and_each_reduction() {
    let g = Grid::new(37, 22, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
    let (cells, u, v) = (37 * 22 * 4, 38 * 22 * 4, 37 * 23 * 4);
    let sweeps = jacobi_sweeps(&g, PressureSolver::Jacobi, None, 5);
    assert_eq!(bytes_moved(&sweeps, &g), 5 * 3 * cells);
    let mut b = Builder::new(&g);
    b.reduce(U, ReduceOp::MaxAbs, 0);
    b.reduce(Density, ReduceOp::MaxAbs, 1);
    assert_eq!(bytes_moved(&b.build(), &g), u + cells);
    let mut b = Builder::new(&g);
    b.run_plain(SUBTRACT_GRADIENT, &[U, V, Pressure, PressureLo, UFaces, VFaces]);
    assert_eq!(bytes_moved(&b.build(), &g), 2 * (u + v) + 2 * cells);
    // Over a multigrid level, each slot once over the level's cells (`mg` read and written);
    // `mg_coarse` reads and writes the three arrays of every level it cycles: from 16 × 12,
    // the levels 16 × 12, 8 × 6 and 4 × 3, 252 cells.
    let mut b = Builder::new(&g);
    let level = MgParams { nx: 16, ny: 12, ..MgParams::default() };
    b.run_over(kernels::MG_SMOOTH, &[FieldId::Multigrid, FieldId::MgFaces], Some(&level), [9, 5]);
    assert_eq!(bytes_moved(&b.build(), &g), 2 * 9 * 5 * 4);
    let mut b = Builder::new(&g);
    b.run_over(MG_COARSE, &[FieldId::Multigrid, FieldId::MgFaces], Some(&level), [multigrid::COARSE_THREADS, 1]);
    assert_eq!(bytes_moved(&b.build(), &g), 2 * 3 * 252 * 4);
}

#[test]
fn every_dispatch_binds_every_slot() {
    let g = Grid::new(8, 6, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
    let p = SimParams { viscosity: 0.1, vorticity: 1.0, ..SimParams::default() };
    for s in [step(&g, &p), diagnostics(&g)] {
        for d in s.dispatches() {
            assert_eq!(d.resources.len(), d.kernel.bindings.len(), "{}", d.kernel.name);
        }
    }
}

/// The implicit viscosity costs nothing when the viscosity is zero (the default): no
/// diffusion dispatch and no swap. A positive one runs its `viscosity_iterations`, then two
/// swaps put the result in u and v.
#[test]
fn zero_viscosity_schedules_no_diffusion() {
    let g = Grid::new(8, 6, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
    let diffusion = |viscosity: f32| {
        let s = step(&g, &SimParams { viscosity, viscosity_iterations: 7, ..SimParams::default() });
        (s.dispatches().filter(|d| d.kernel == DIFFUSE_VELOCITY).count(), s.ops().len())
    };
    let (none, ops) = diffusion(0.0);
    assert_eq!(none, 0);
    assert_eq!(diffusion(1e-3), (7, ops + 7 + 2));
}

#[test]
fn sor_iterations_are_a_red_and_a_black_pass_with_the_default_optimal_omega() {
    let g = Grid::new(40, 30, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
    let mut p = SimParams::default();
    p.pressure.solver = PressureSolver::Sor;
    p.pressure.iterations = 3;
    p.pressure.warm_start = false;
    let s = projection(&g, &p);
    let passes: Vec<JacobiParams> = s
        .dispatches()
        .filter(|d| d.kernel == kernels::SOR)
        .map(|d| d.params::<JacobiParams>().expect("sor without JacobiParams"))
        .collect();
    assert_eq!(passes.iter().map(|j| j.colour).collect::<Vec<_>>(), [0, 1, 0, 1, 0, 1]);
    assert_eq!(passes.iter().map(|j| j.zero_initial).collect::<Vec<_>>(), [1, 0, 0, 0, 0, 0]);
    // Three iterations: the cap 1 + 0.01^(1/3) is below the asymptotic optimum 1.855.
    let capped = 1.0 + 0.01f32.powf(1.0 / 3.0);
    assert!(passes.iter().all(|j| (j.omega - capped).abs() < 1e-6), "{}", passes[0].omega);
    p.pressure.iterations = 200;
    let s = projection(&g, &p);
    let optimum = 2.0 / (1.0 + (std::f32::consts::PI / 40.0).sin());
    let j = s.dispatches().find(|d| d.kernel == kernels::SOR).and_then(|d| d.params::<JacobiParams>());
    let j = j.expect("a sor pass");
    assert!((j.omega - optimum).abs() < 1e-6, "{}", j.omega);
    assert_eq!(s.dispatches().last().expect("dispatch").resource("pressure"), Some(Pressure.into()));
}

#[test]
fn multigrid_is_load_v_cycles_store_over_the_levels() {
    // Levels 0 (150 × 90) and 1 (75 × 45) by dispatch (two smoothing pairs each, which
    // restrict and prolong), from level 2 (38 × 23) on in one `mg_coarse` per V-cycle.
    let g = Grid::new(150, 90, 1.0, Boundary::Wall, Boundary::Periodic).expect("grid");
    let mut p = SimParams::default();
    p.pressure.solver = PressureSolver::Multigrid;
    p.pressure.iterations = 2;
    p.pressure.precision = Some(crate::grid::params::Precision::Single);
    let s = projection(&g, &p);
    let names: Vec<Kernel> = s.dispatches().map(|d| d.kernel).collect();
    assert_eq!(names[0], DIVERGENCE);
    assert_eq!(names[1], kernels::MG_LOAD);
    assert_eq!(names[names.len() - 2], kernels::MG_STORE);
    assert_eq!(names[names.len() - 1], SUBTRACT_GRADIENT);
    let levels = multigrid::levels(150, 90);
    assert!(!multigrid::fits_coarse(&levels[1]));
    assert!(multigrid::fits_coarse(&levels[2]));
    let count = |k: Kernel| names.iter().filter(|x| **x == k).count();
    assert_eq!((count(kernels::MG_RESTRICT), count(kernels::MG_PROLONG), count(MG_COARSE)), (0, 0, 2));
    assert_eq!(count(kernels::MG_SMOOTH2), 2 * 2 * 2, "a pre- and a post-smoothing pair per V-cycle on levels 0, 1");
    assert_eq!(count(kernels::MG_SMOOTH), 0);
    for d in s.dispatches().filter(|d| d.kernel.name.starts_with("mg_")) {
        let [x, y] = d.extent;
        if d.kernel == MG_COARSE {
            // One workgroup, from level 2.
            assert_eq!([x, y], [multigrid::COARSE_THREADS, 1]);
            let m = d.params::<MgParams>().expect("MgParams");
            assert_eq!((m.nx, m.ny, m.b), (levels[2].nx, levels[2].ny, levels[2].b));
        } else {
            // Every other multigrid dispatch runs over a level of the hierarchy.
            assert!(levels.iter().any(|l| (l.nx, l.ny) == (x, y)), "{x}x{y}");
        }
    }
    assert_eq!(s.dispatches().last().expect("dispatch").resource("pressure"), Some(Pressure.into()));
}

/// In double-float each V-cycle starts from zero: its first step computes level 0's `b` from
/// the double-float pressure and its last adds the correction to the pressure; a cold start
/// loads (and zeroes the pressure) with `mg_load` first; a grid whose whole cycle is one
/// `mg_coarse` loads and stores in passes of their own.
#[test]
fn double_float_multigrid_cycles_are_corrections_added_to_the_pressure() {
    use multigrid::{LOAD_RESIDUAL, SMOOTH2_ACCUMULATE, SMOOTH2_LOAD_RESIDUAL, STORE_ADD};
    let mg = |d: &Dispatch| d.params::<MgParams>().unwrap_or_else(|| panic!("{} without MgParams", d.kernel.name));
    let g = Grid::new(150, 90, 1.0, Boundary::Wall, Boundary::Periodic).expect("grid");
    for warm in [false, true] {
        let mut p = SimParams::default();
        p.pressure.solver = PressureSolver::Multigrid;
        p.pressure.iterations = 3;
        p.pressure.warm_start = warm;
        let s = projection(&g, &p);
        let ds: Vec<&Dispatch> = s.dispatches().filter(|d| d.kernel.name.starts_with("mg_")).collect();
        assert!(ds.iter().all(|d| d.kernel != kernels::MG_STORE));
        let loads: Vec<&&Dispatch> = ds.iter().filter(|d| d.kernel == kernels::MG_LOAD).collect();
        if warm {
            assert!(loads.is_empty(), "a warm solve computes its residuals in the smoothing");
        } else {
            assert_eq!(loads.len(), 1);
            assert_eq!((mg(loads[0]).colour, mg(loads[0]).zero_initial), (LOAD_RESIDUAL, 1));
            assert_eq!(ds[0].kernel, kernels::MG_LOAD);
        }
        // Each cycle: level 0's pre-smoothing pair (from zero) opens it, its post-smoothing
        // pair (accumulating) closes it.
        let level0 = |d: &Dispatch| d.kernel == kernels::MG_SMOOTH2 && mg(d).nx == 150;
        let pairs: Vec<MgParams> = ds.iter().filter(|d| level0(d)).map(|d| mg(d)).collect();
        assert_eq!(pairs.len(), 6);
        for (c, pair) in pairs.chunks(2).enumerate() {
            let (pre, post) = (pair[0], pair[1]);
            assert_eq!(pre.zero_initial, 1);
            let loads_itself = pre.colour & SMOOTH2_LOAD_RESIDUAL != 0;
            assert_eq!(loads_itself, warm || c > 0, "cycle {c}, warm {warm}");
            assert_eq!(pre.colour & SMOOTH2_ACCUMULATE, 0);
            assert_ne!(post.colour & SMOOTH2_ACCUMULATE, 0);
            assert_eq!(post.colour & SMOOTH2_LOAD_RESIDUAL, 0);
        }
        let last = ds.last().expect("dispatch");
        assert!(level0(last) && mg(last).colour & SMOOTH2_ACCUMULATE != 0);
    }
    // A grid whose whole cycle is one mg_coarse.
    let mut p = SimParams::default();
    p.pressure.solver = PressureSolver::Multigrid;
    p.pressure.iterations = 3;
    let g = Grid::new(24, 20, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
    let names: Vec<Kernel> = projection(&g, &p).dispatches().map(|d| d.kernel).collect();
    let cycle = [kernels::MG_LOAD, MG_COARSE, kernels::MG_STORE];
    assert_eq!(names[1..names.len() - 1], [cycle, cycle, cycle].concat());
    let s = projection(&g, &p);
    assert!(s.dispatches().filter(|d| d.kernel == kernels::MG_STORE).all(|d| mg(d).colour == STORE_ADD));
}

#[test]
fn mgpcg_iterations_are_a_symmetric_v_cycle_two_dots_and_updates() {
    let g = Grid::new(150, 90, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
    let mut p = SimParams::default();
    p.pressure.solver = PressureSolver::Mgpcg;
    p.pressure.iterations = 3;
    let s = projection(&g, &p);
    let count = |k: Kernel| s.dispatches().filter(|d| d.kernel == k).count();
    assert_eq!(count(kernels::CG_INIT), 1);
    assert_eq!(count(kernels::CG_DOT), 3 * 2 * 2, "two dots of two passes per iteration");
    assert_eq!((count(kernels::CG_DIRECTION), count(kernels::CG_APPLY), count(kernels::CG_UPDATE)), (3, 3, 3));
    let store = s.dispatches().find(|d| d.kernel == kernels::MG_STORE).expect("store");
    let x = mgpcg::cg_layout(150, 90).x;
    assert_eq!(store.params::<MgParams>().map(|m| m.p), Some(x), "the pressure is CG's x");
    // The first pass of each preconditioning cycle starts from zero.
    let zero_starts = s
        .dispatches()
        .filter(|d| d.kernel == kernels::MG_SMOOTH2 && d.params::<MgParams>().is_some_and(|m| m.zero_initial == 1))
        .count();
    assert_eq!(zero_starts, 3);
    // The coarse part of each preconditioning cycle is symmetric and starts from the
    // restricted residual (its p is zeroed by the restriction).
    let coarse: Vec<MgParams> = s
        .dispatches()
        .filter(|d| d.kernel == MG_COARSE)
        .map(|d| d.params::<MgParams>().expect("mg_coarse without MgParams"))
        .collect();
    assert_eq!(coarse.len(), 3);
    assert!(coarse.iter().all(|m| m.colour == 1 && m.zero_initial == 0), "{coarse:?}");
}

#[test]
fn pressure_ends_in_its_own_buffer_name() {
    let g = Grid::new(8, 6, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
    for iterations in [1, 2, 7, 8, 19] {
        let mut p = SimParams::default();
        p.pressure.iterations = iterations;
        let s = step(&g, &p);
        let sweeps = s.dispatches().filter(|d| d.kernel == kernels::JACOBI).count();
        assert_eq!(sweeps, iterations as usize);
        p.pressure.solver = PressureSolver::JacobiMultisweep;
        let s2 = step(&g, &p);
        let fused: Vec<u32> = s2
            .dispatches()
            .filter(|d| d.kernel == kernels::JACOBI_MULTISWEEP)
            .map(|d| d.params::<JacobiParams>().expect("jacobi_multisweep without JacobiParams").sweeps)
            .collect();
        assert_eq!(fused.iter().sum::<u32>(), iterations);
        assert!(fused.iter().all(|&n| (1..=MULTISWEEP_MAX).contains(&n)), "{fused:?}");
        assert_eq!(fused.len() as u32, iterations.div_ceil(MULTISWEEP_MAX));
        assert_eq!(s2.dispatches().filter(|d| d.kernel == kernels::JACOBI).count(), 0);
        assert_eq!(s2.dispatches().last().expect("dispatch").resource("pressure"), Some(Pressure.into()));
        let last = s.dispatches().last().expect("dispatch");
        assert_eq!(last.kernel, SUBTRACT_GRADIENT);
        assert_eq!(last.resource("pressure"), Some(Pressure.into()));
    }
}
