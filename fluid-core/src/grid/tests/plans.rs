//! The grid's schedules held against the IR: their identities, their lowering to plans
//! (barriers, swaps, parameter tables, reductions), the transient sharing and the bindings
//! every preset's plans pass.

use crate::grid::params::PressureSolver;
use crate::grid::params::SimParams;
use crate::grid::{Boundary, FieldId, Grid, GridFields, kernels, step};
use swirly_ir::lower::{Buffer, Invocation, Plan, Target, check_bindings, check_transients, lower};
use swirly_ir::schedule::{MAX_BINDINGS, Op, ReduceOp, Schedule, ScheduleBuilder};
use swirly_ir::{ResourceDesc, ResourceId};

const TARGET: Target = Target { param_align: 64, workgroup: (16, 16) };

fn every_plan() -> Vec<(String, Plan)> {
    crate::testing::every_plan(&TARGET)
}

/// Barriers stand exactly where data flows, on every plan of
/// [`crate::testing::every_plan`]:
/// - every two invocations that bind the same buffer, one of them writing it, have a barrier
///   between them (checked pair by pair over the whole plan, not by the running tracker);
/// - every barrier is needed: the invocation after it conflicts that way with one since the
///   barrier before.
///
/// Lavapipe runs one dispatch after another, so a missing barrier changes no result there;
/// this is the check that runs in CI.
#[test]
fn barriers_stand_exactly_between_dependent_invocations() {
    let touches = |inv: &Invocation, buffer: Buffer| {
        let mut found = (false, false); // (binds it, writes it)
        for (i, b) in inv.buffers.iter().enumerate() {
            if *b == buffer {
                found.0 = true;
                found.1 |= inv.kernel.bindings[i].access.writes();
            }
        }
        found
    };
    let conflict = |a: &Invocation, b: &Invocation| {
        a.buffers.iter().chain(&b.buffers).any(|x| {
            let (ta, wa) = touches(a, *x);
            let (tb, wb) = touches(b, *x);
            ta && tb && (wa || wb)
        })
    };
    let (mut plans, mut invocations, mut placed) = (0, 0, 0);
    for (what, plan) in every_plan() {
        let inv = &plan.invocations;
        let barrier: Vec<bool> = inv.iter().map(|i| i.barrier).collect();
        plans += 1;
        invocations += inv.len();
        placed += barrier.iter().filter(|b| **b).count();
        for b in 0..inv.len() {
            for a in 0..b {
                if conflict(&inv[a], &inv[b]) {
                    assert!(
                        barrier[a + 1..=b].iter().any(|x| *x),
                        "{what}: {} ({a}) and {} ({b}) share a buffer one of them writes, with no barrier \
                             between them",
                        inv[a].kernel.name,
                        inv[b].kernel.name
                    );
                }
            }
            if barrier[b] {
                let since = barrier[..b].iter().rposition(|x| *x).unwrap_or(0);
                assert!(
                    (since..b).any(|a| conflict(&inv[a], &inv[b])),
                    "{what}: the barrier before {} ({b}) waits for nothing it reads or writes",
                    inv[b].kernel.name
                );
            }
        }
    }
    // Not every invocation waits (independent ones share a barrier interval) and not none.
    assert!(placed > 0 && placed < invocations, "{placed} barriers over {invocations} invocations");
    assert!(plans >= 400, "{plans} plans");
}

/// A plan follows its schedule's swaps from the starting assignment, expands a reduction
/// into its two passes over the partials and results, stores each distinct parameter
/// block once at an aligned stride, and counts workgroups by the target's shape or the
/// kernel's own.
#[test]
fn plans_follow_swaps_dedup_blocks_and_expand_reductions() {
    let grid = Grid::new(40, 30, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
    let fields = GridFields::all(&grid);
    let n = fields.resources().len();
    // Start from an assignment where pressure and its partner are exchanged already.
    let (p, t) = (FieldId::Pressure.index(), FieldId::PressureTmp.index());
    let mut start: Vec<usize> = (0..n).collect();
    start.swap(p, t);
    let sweeps = step::jacobi_sweeps(&grid, PressureSolver::Jacobi, Some(0.8), 3);
    let plan = lower(&sweeps, fields.resources(), &start, &TARGET).expect("lowered");
    assert_eq!(plan.invocations.len(), 3);
    assert!(plan.invocations.iter().all(|i| i.kernel == kernels::JACOBI && i.workgroups == (3, 2)));
    // Three sweeps ping-pong and end with a swap back: the end is the start's buffers swapped.
    let mut end = start.clone();
    end.swap(p, t);
    assert_eq!(plan.end, end);
    assert_eq!(plan.invocations[0].buffers[0], Buffer::Physical(start[p]));
    // One block for the three sweeps but the first (which starts from the warm pressure:
    // all three are warm, so one block), at a stride of 64.
    assert_eq!(plan.params.len(), 64);
    assert!(plan.invocations.iter().all(|i| i.params == Some(0)));
    // A reduction: two passes, the second one workgroup.
    let mut b = Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]);
    b.reduce(ResourceId::from(FieldId::Density), ReduceOp::SumSquares, 5);
    let plan = lower(&b.build(), fields.resources(), &(0..n).collect::<Vec<_>>(), &TARGET).expect("lowered");
    let names: Vec<_> = plan.invocations.iter().map(|i| (i.kernel.name, i.workgroups)).collect();
    assert_eq!(names, [("reduce_partial", (2, 1)), ("reduce_final", (1, 1))]);
    assert_eq!(
        plan.invocations[0].buffers,
        [Buffer::Physical(FieldId::Density.index()), Buffer::Partials, Buffer::Results]
    );
    assert!(plan.invocations[1].barrier, "the final pass reads the partials the first wrote");
    assert_eq!(plan.reduction_slots, 6);
}

/// What a schedule asks that the resources cannot give is an error, not a panic: a
/// resource past the list, an assignment of the wrong length, a reduction of words that
/// are not `f32`.
#[test]
fn impossible_schedules_are_refused() {
    let grid = Grid::new(8, 6, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
    let fields = GridFields::all(&grid);
    let few = &fields.resources()[..3];
    let start: Vec<usize> = (0..3).collect();
    let e = lower(&step::curl(&grid), few, &start, &TARGET).expect_err("curl past three resources");
    assert!(e.to_string().contains("no resource"), "{e}");
    let e = lower(&step::curl(&grid), fields.resources(), &start, &TARGET).expect_err("a short assignment");
    assert!(e.to_string().contains("assignment"), "{e}");
    let keys =
        ResourceDesc::new("keys", swirly_ir::Shape::Elements, swirly_ir::Format::U32, swirly_ir::Lifetime::Scratch, 10);
    let mut b = Schedule::builder([0; swirly_ir::schedule::UNIFORM_BYTES], [0, 0]);
    b.reduce(ResourceId(0), ReduceOp::MaxAbs, 0);
    let e = lower(&b.build(), &[keys], &[0], &TARGET).expect_err("u32 words");
    assert!(e.to_string().contains("not floats"), "{e}");
    // A swap of two formats: buffers of two element sizes cannot trade places.
    let half =
        |name| ResourceDesc::new(name, swirly_ir::Shape::Cells, swirly_ir::Format::F16, swirly_ir::Lifetime::State, 10);
    let mut b = Schedule::builder([0; swirly_ir::schedule::UNIFORM_BYTES], [0, 0]);
    b.swap(ResourceId(0), ResourceId(1));
    let full = ResourceDesc { format: swirly_ir::Format::F32, ..half("b") };
    let e = lower(&b.build(), &[half("a"), full], &[0, 1], &TARGET).expect_err("two formats");
    assert!(e.to_string().contains("one format"), "{e}");
}

/// Transient resources share their group's largest member's memory, and a schedule that
/// could see the sharing is refused: one that swaps a transient, reads one before writing
/// it, or has two of a group live at once. The grid's declared `scratch` and multigrid
/// workspace pass in every schedule ([`crate::testing::every_plan`]).
#[test]
fn transients_share_memory_only_where_no_schedule_can_tell() {
    use swirly_ir::{Format, Lifetime, Shape};
    let grid = Grid::new(8, 6, 1.0, Boundary::Wall, Boundary::Wall).expect("grid");
    let fields = GridFields::all(&grid);
    let mut resources = fields.resources().to_vec();
    let t = Lifetime::Transient { shares: "w" };
    for f in [FieldId::Scratch, FieldId::Curl, FieldId::PressureTmp] {
        resources[f.index()].lifetime = t;
    }
    // The largest member owns the group, the first of equals; an empty one owns itself.
    resources[FieldId::PressureTmp.index()].len = 100;
    let own = swirly_ir::resource::owners(&resources);
    let (s, c, p) = (FieldId::Scratch.index(), FieldId::Curl.index(), FieldId::PressureTmp.index());
    assert_eq!((own[s], own[c], own[p]), (p, p, p));
    resources[p].len = 0;
    let own = swirly_ir::resource::owners(&resources);
    assert_eq!((own[s], own[c], own[p]), (c, c, p));
    assert_eq!(own[FieldId::U.index()], FieldId::U.index());
    let lone = ResourceDesc::new("x", Shape::Cells, Format::F32, Lifetime::Transient { shares: "z" }, 4);
    assert_eq!(swirly_ir::resource::owners(&[lone]), [0]);

    let id = |f: FieldId| ResourceId::from(f);
    let mut b = Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]);
    b.dispatch(kernels::CURL, &[id(FieldId::U), id(FieldId::V), id(FieldId::Curl)], None, [8, 6]);
    b.dispatch(
        kernels::DIVERGENCE,
        &[id(FieldId::U), id(FieldId::V), id(FieldId::UFaces), id(FieldId::VFaces), id(FieldId::Scratch)],
        None,
        [8, 6],
    );
    let ok = b.build();
    check_transients(&ok, &resources).expect("curl dead before scratch is written");
    let cases: [(&str, Schedule); 3] = [
        ("live at operation 1", {
            let mut b = Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]);
            b.dispatch(kernels::CURL, &[id(FieldId::U), id(FieldId::V), id(FieldId::Curl)], None, [8, 6]);
            b.dispatch(
                kernels::DIVERGENCE,
                &[id(FieldId::U), id(FieldId::V), id(FieldId::UFaces), id(FieldId::VFaces), id(FieldId::Scratch)],
                None,
                [8, 6],
            );
            b.reduce(id(FieldId::Curl), ReduceOp::MaxAbs, 0);
            b.build()
        }),
        ("reads the transient `curl` before writing it", {
            let mut b = Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]);
            b.reduce(id(FieldId::Curl), ReduceOp::MaxAbs, 0);
            b.build()
        }),
        ("swaps `curl`", {
            let mut b = Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]);
            b.swap(id(FieldId::Curl), id(FieldId::Density));
            b.build()
        }),
    ];
    for (what, schedule) in cases {
        let e = check_transients(&schedule, &resources).expect_err(what).to_string();
        assert!(e.contains(what), "{e}");
        let start = swirly_ir::resource::owners(&resources);
        assert!(lower(&schedule, &resources, &start, &TARGET).is_err(), "lowering refuses it too: {what}");
    }
}

/// The pressure's ping-pong partner is declared only for the sweeps that swap with it, and
/// no other solver's schedules touch it.
#[test]
fn only_the_sweeps_declare_or_touch_the_pressures_partner() {
    use swirly_ir::schedule::Op;
    let grid = Grid::new(20, 12, 0.1, Boundary::Wall, Boundary::Wall).expect("grid");
    let partner = ResourceId::from(FieldId::PressureTmp);
    for solver in [
        PressureSolver::Jacobi,
        PressureSolver::JacobiMultisweep,
        PressureSolver::Sor,
        PressureSolver::Relaxation,
        PressureSolver::Multigrid,
        PressureSolver::Mgpcg,
        PressureSolver::PoissonFilter,
    ] {
        let mut params = crate::scene::Scene::preset("smoke").expect("preset").params;
        params.pressure.solver = solver;
        params.pressure.iterations = 8;
        let sweeps = matches!(solver, PressureSolver::Jacobi | PressureSolver::JacobiMultisweep | PressureSolver::Sor);
        assert_eq!(GridFields::declare(&grid, &params).has(FieldId::PressureTmp), sweeps, "{solver:?}");
        for schedule in [step::step(&grid, &params), step::initialize(&grid, &params), step::setup(&grid, &params)] {
            let touches = schedule.ops().iter().any(|op| match op {
                Op::Dispatch(d) => d.resources.contains(&partner),
                Op::Swap(a, b) => *a == partner || *b == partner,
                Op::Reduce { resource, .. } => *resource == partner,
            });
            assert!(sweeps || !touches, "{solver:?} touches pressure_tmp");
        }
    }
}

/// A schedule that binds an empty resource to a slot its kernel needs is refused before it
/// runs (Jacobi sweeps on a multigrid scene, which holds no `pressure_tmp`); the optional
/// slots (fields a scene may not carry) take empty resources.
#[test]
fn empty_resources_bind_only_to_optional_slots() {
    let grid = Grid::new(20, 12, 0.1, Boundary::Wall, Boundary::Wall).expect("grid");
    let mut params = crate::scene::Scene::preset("smoke").expect("preset").params;
    params.pressure.solver = PressureSolver::Multigrid;
    let fields = GridFields::declare(&grid, &params);
    let sweeps = step::jacobi_sweeps(&grid, PressureSolver::Jacobi, None, 2);
    let e = check_bindings(&sweeps, fields.resources()).expect_err("no pressure_tmp").to_string();
    assert!(e.contains("`jacobi`") && e.contains("`pressure_tmp`"), "{e}");
    let start = swirly_ir::resource::owners(fields.resources());
    assert!(lower(&sweeps, fields.resources(), &start, &TARGET).is_err());
    // Smoke carries no dye: the step binds the empty dye to optional slots only.
    assert!(!fields.has(FieldId::Dye));
    check_bindings(&step::step(&grid, &params), fields.resources()).expect("optional slots");
}

/// A schedule built twice the same has one id (so backends find what they recorded for
/// it); a change anywhere (a parameter byte, the sweep count, the grid's uniform, the
/// order of two ops) gives another.
#[test]
fn the_id_names_the_content() {
    let grid = Grid::new(40, 30, 0.1, Boundary::Wall, Boundary::Periodic).expect("grid");
    let params = SimParams::default();
    let id = |p: &SimParams, g: &Grid| step::step(g, p).id();
    assert_eq!(id(&params, &grid), id(&params, &grid));
    assert_eq!(step::step(&grid, &params), step::step(&grid, &params));
    let mut other = params.clone();
    other.vorticity += 0.01;
    assert_ne!(id(&other, &grid), id(&params, &grid), "a parameter");
    let mut other = params.clone();
    other.pressure.iterations += 1;
    assert_ne!(id(&other, &grid), id(&params, &grid), "the iterations");
    let taller = Grid::new(40, 31, 0.1, Boundary::Wall, Boundary::Periodic).expect("grid");
    assert_ne!(id(&params, &taller), id(&params, &grid), "the grid");
    let schedule = step::step(&grid, &params);
    let mut swapped = Schedule::builder(*schedule.uniform(), schedule.grid());
    let mut ops = schedule.ops().to_vec();
    let (a, b) = (ops.iter().position(|o| matches!(o, Op::Dispatch(_))).expect("a dispatch"), ops.len() - 1);
    ops.swap(a, b);
    for op in ops {
        swapped.push(op);
    }
    assert_ne!(swapped.build().id(), schedule.id(), "the order of the ops");
    let one = |f: &dyn Fn(&mut ScheduleBuilder)| {
        let mut b = Schedule::builder(*schedule.uniform(), schedule.grid());
        f(&mut b);
        b.build().id()
    };
    let (r, s) = (ResourceId(1), ResourceId(2));
    assert_ne!(one(&|b| b.swap(r, s)), one(&|b| b.swap(s, r)), "a resource");
    assert_ne!(one(&|b| b.swap(r, s)), one(&|b| b.reduce(r, ReduceOp::MaxAbs, 2)), "the kind of op");
    assert_ne!(
        one(&|b| b.reduce(r, ReduceOp::MaxAbs, 0)),
        one(&|b| b.reduce(r, ReduceOp::SumSquares, 0)),
        "the reduction"
    );
}

/// Every kernel's bindings fit a dispatch's inline list, and its storage buffers (the
/// splat list included) the 8 per stage that WebGPU's default limits, which the wgpu
/// backend asks for, allow.
#[test]
fn every_kernel_fits_the_binding_list() {
    for k in crate::kernels() {
        assert!(k.bindings.len() <= MAX_BINDINGS, "{}: {} bindings", k.name, k.bindings.len());
        let storage = k.bindings.len() + usize::from(k.records);
        assert!(storage <= 8, "{}: {storage} storage buffers, at most 8", k.name);
    }
}
