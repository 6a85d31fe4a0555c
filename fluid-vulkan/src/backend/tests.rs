//! The backend's own tests: plans and descriptor pools, validation, allocation, replays.

use std::collections::HashMap;

use ash::vk;
use swirly_core::ir::lower::{Invocation, Target};
use swirly_core::{Backend, Schedule, StepInputs};

use super::record::{distinct_sets, pool_sizes, set_bindings};
use super::{VulkanBackend, WORKGROUP};
use swirly_core::grid::step;
use swirly_core::{Boundary, FieldId, Grid, GridFields, SimParams};

/// With `FLUID_REQUIRE_VALIDATION=1` (set by `scripts/test.sh`), a debug build's backend
/// must run under the validation layer: a missing layer is a failure, not a skip.
fn require_validation(b: &VulkanBackend) {
    if std::env::var("FLUID_REQUIRE_VALIDATION").as_deref() == Ok("1") && cfg!(debug_assertions) {
        assert!(b.validation(), "the Khronos validation layer is not on (apt-get install vulkan-validationlayers)");
    }
}

/// The plans the backend records: every preset's, `swirly_core::testing::every_plan`.
fn every_plan() -> Vec<(String, Vec<Invocation>)> {
    let target = Target { param_align: 64, workgroup: WORKGROUP };
    swirly_core::testing::every_plan(&target).into_iter().map(|(what, plan)| (what, plan.invocations)).collect()
}

/// The descriptor pool of every plan holds the sets the recording allocates: counted from
/// the set layouts the pipelines are built with (`set_bindings`), one set 0 per entry point
/// and one set 1 per entry point and physical buffers, the pool has at least as many
/// descriptors of each type and exactly as many sets (at least one). (Lavapipe does not hold
/// a recording to its pool's counts; a driver may fail the allocation with
/// `VK_ERROR_OUT_OF_POOL_MEMORY`.)
#[test]
fn descriptor_pools_hold_every_set_of_their_recording() {
    for (what, plan) in every_plan() {
        let mut need: HashMap<vk::DescriptorType, u32> = HashMap::new();
        let mut sets = 0;
        let mut add = |bindings: &[(u32, vk::DescriptorType)]| {
            sets += 1;
            for (_, t) in bindings {
                *need.entry(*t).or_default() += 1;
            }
        };
        let (mut entries0, mut entries1) = (Vec::new(), Vec::new());
        for s in &plan {
            if !entries0.contains(&s.kernel.name) {
                entries0.push(s.kernel.name);
                add(&set_bindings(s.kernel)[0]);
            }
            if !entries1.contains(&(s.kernel.name, &s.buffers)) {
                entries1.push((s.kernel.name, &s.buffers));
                add(&set_bindings(s.kernel)[1]);
            }
        }
        let bindings =
            |e: &str| swirly_core::kernels().into_iter().find(|k| k.name == e).map_or(0, |k| k.bindings.len());
        let (max_sets, sizes) = pool_sizes(&distinct_sets(&plan), bindings);
        // An empty plan (a setup with nothing to set up) still gets a pool of one set.
        assert_eq!(max_sets, sets.max(1), "{what}: sets");
        for (t, n) in need {
            let have: u32 = sizes.iter().filter(|s| s.ty == t).map(|s| s.descriptor_count).sum();
            assert!(have >= n, "{what}: {have} descriptors of {t:?} in the pool, {n} in its sets");
        }
    }
}

/// A validation error fails the backend's next call, with the layer's message: here a
/// deliberately invalid call of the test's own on the backend's device (a buffer of size
/// zero, `VUID-VkBufferCreateInfo-size-00912`), reported by the next `allocate`; the call
/// after that runs clean again. Debug builds only, where the layer is on when installed
/// (`FLUID_REQUIRE_VALIDATION=1`, set by `scripts/test.sh`, makes a missing layer a failure).
#[test]
fn a_validation_error_fails_the_next_call() {
    let mut b = VulkanBackend::new().expect("a Vulkan device (install mesa-vulkan-drivers)");
    require_validation(&b);
    if !b.validation() {
        return;
    }
    let grid = Grid::new(8, 6, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
    let resources = GridFields::all(&grid);
    b.context().provoke_validation_error();
    let e = b.allocate(resources.resources()).expect_err("the validation error").to_string();
    assert!(e.contains("validation error") && e.contains("VUID-VkBufferCreateInfo-size-00912"), "{e}");
    b.allocate(&[]).expect("clean again");
    b.allocate(resources.resources()).expect("clean again");
    b.run(&step::diagnostics(&grid), &StepInputs::default()).expect("diagnostics");
    b.finish().expect("finish");
}

/// Allocating frees what it no longer holds and keeps what it still does: the allocator
/// holds the same bytes after a grid's resources are allocated once, twice, and again
/// after a larger grid's, at least their bytes more than before the first; a Jacobi
/// scene's resources take the multigrid workspace less than a multigrid scene's, and
/// switching between the two frees and takes exactly that; a resource kept across an
/// allocation keeps its values.
#[test]
fn allocating_again_frees_what_it_no_longer_holds() {
    use swirly_core::params::PressureSolver;
    let mut b = VulkanBackend::new().expect("a Vulkan device (install mesa-vulkan-drivers)");
    let in_use = |b: &VulkanBackend| b.context().memory().0;
    let small = GridFields::all(&Grid::new(33, 20, 1.0, Boundary::Wall, Boundary::Periodic).expect("grid"));
    let large = GridFields::all(&Grid::new(130, 90, 1.0, Boundary::Wall, Boundary::Wall).expect("grid"));
    let before = in_use(&b);
    b.allocate(small.resources()).expect("allocate");
    let once = in_use(&b);
    assert!(once >= before + small.bytes(), "{before} bytes, then {once} with {} of resources", small.bytes());
    b.allocate(small.resources()).expect("allocate");
    assert_eq!(in_use(&b), once, "allocated twice");
    b.allocate(large.resources()).expect("allocate");
    assert!(in_use(&b) >= before + large.bytes());
    b.allocate(small.resources()).expect("allocate");
    assert_eq!(in_use(&b), once, "after a larger grid");
    b.allocate(&[]).expect("nothing");
    assert_eq!(in_use(&b), before, "everything freed");
    // The solver's workspace comes and goes with the solver; the velocity stays.
    let grid = Grid::new(64, 48, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
    let params = |solver| {
        let mut p = SimParams::default();
        p.pressure.solver = solver;
        p
    };
    let jacobi = GridFields::declare(&grid, &params(PressureSolver::Jacobi));
    let multigrid = GridFields::declare(&grid, &params(PressureSolver::Multigrid));
    let workspace = multigrid.desc(FieldId::Multigrid).bytes();
    assert!(workspace > 0 && jacobi.desc(FieldId::Multigrid).bytes() == 0);
    b.allocate(jacobi.resources()).expect("jacobi");
    let u: Vec<f32> = (0..grid.len(FieldId::U)).map(|k| k as f32).collect();
    b.upload(FieldId::U.into(), &u).expect("upload");
    let lean = in_use(&b);
    b.allocate(multigrid.resources()).expect("multigrid");
    // Multigrid holds its workspace, with the diagnostics scratch inside it, and no pressure
    // partner: Jacobi's scratch and partner go (up to their buffers' alignment).
    let dropped = jacobi.desc(FieldId::PressureTmp).bytes() + jacobi.desc(FieldId::Scratch).bytes();
    let now = in_use(&b);
    assert!(
        now + dropped + 1024 >= lean + workspace && now < lean + workspace,
        "{now} against {lean} + {workspace} − {dropped}"
    );
    assert_eq!(b.download(FieldId::U.into()).expect("u"), u, "the velocity was kept");
    b.allocate(jacobi.resources()).expect("jacobi again");
    assert_eq!(in_use(&b), lean);
    let report = b.memory().expect("memory");
    assert_eq!(report.resources.len(), jacobi.resources().len());
    assert!(report.total == lean && report.reserved >= report.total, "{report:?}");
}

/// A smoke step, replayed, under the validation layer (with synchronization validation):
/// any validation error fails `run`/`finish`. `FLUID_REQUIRE_VALIDATION=1` (set by
/// `scripts/test.sh`) makes a missing layer a failure too.
#[test]
fn steps_replay_cleanly_under_validation() {
    let mut b = VulkanBackend::new().expect("a Vulkan device (install mesa-vulkan-drivers)");
    require_validation(&b);
    let grid = Grid::new(33, 20, 1.0, Boundary::Wall, Boundary::Periodic).expect("grid");
    let params = SimParams { viscosity: 0.01, vorticity: 0.3, ..SimParams::default() };
    b.allocate(GridFields::declare(&grid, &params).resources()).expect("allocate");
    let step = step::step(&grid, &params);
    let diagnostics = step::diagnostics(&grid);
    let splat = swirly_core::Splat {
        center: [16.0, 10.0],
        radius: 3.0,
        velocity: [1.0, 2.0],
        density: 1.0,
        ..swirly_core::Splat::default()
    };
    let mut recorded = 0;
    for k in 0..24 {
        let inputs = StepInputs {
            dt: 0.1,
            time: 0.1 * k as f32,
            step: k,
            records: swirly_core::splat::records(&vec![splat; k as usize % 5], &grid).expect("splats"),
        };
        b.run(&step, &inputs).expect("step");
        b.run(&diagnostics, &StepInputs::default()).expect("diagnostics");
        if k == 11 {
            recorded = b.recordings.len();
        }
    }
    // The field assignment cycles with a short period: after one period every run is a replay.
    assert!(recorded >= 4, "{recorded}");
    assert_eq!(b.recordings.len(), recorded, "steps kept being re-recorded");
    // The same step built again is the same schedule: replayed, not recorded again.
    for k in 0..4 {
        b.run(&step::step(&grid, &params), &StepInputs { dt: 0.1, step: 24 + k, ..StepInputs::default() })
            .expect("step");
        b.run(&step::diagnostics(&grid), &StepInputs::default()).expect("diagnostics");
    }
    assert_eq!(b.recordings.len(), recorded, "a rebuilt schedule was recorded again");
    let r = b.reductions().expect("reductions");
    assert_eq!(r.len(), step::SLOT_STATE_MAX + step::STATE_FIELDS.len());
    assert!(r.iter().all(|x| x.is_finite()), "{r:?}");
    b.finish().expect("finish");
    let density = b.download(FieldId::Density.into()).expect("download");
    assert!(density.iter().any(|x| *x > 0.0), "the splats never arrived");
    // An empty schedule (e.g. the setup of a solver that needs none) is a valid no-op.
    let empty = Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]).build();
    b.run(&empty, &StepInputs::default()).expect("empty schedule");
    b.finish().expect("finish");
}
