//! `mg_coarse`: the rest of a multigrid V-cycle from one small level down to the coarsest and
//! back up, in one invocation. On the GPU one workgroup walks the steps with a barrier between
//! them (a small level costs a dispatch's latency, not its cells); here the steps of
//! [`swirly_core::grid::pressure::multigrid::v_cycle`] from that level on run one after another through the
//! per-level kernels, which defines the answer the shader must give.

use swirly_core::grid::pressure::multigrid::{COARSE_OVER_RELAX, Step, levels_from, over_relax_coarsest, v_cycle};
use swirly_core::grid::uniforms::MgParams;

use super::common::G;
use super::{mg_prolong, mg_restrict, mg_smooth};
use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// The cycle from the level `params` names (`nx`, `ny`, `b`); `colour` bit 0: the symmetric
/// cycle, bit 1 ([`COARSE_OVER_RELAX`]): the coarsest level over-relaxed; `zero_initial` 1:
/// the level starts from zero. With solids every pass weighs the stencil by `faces`.
pub fn run(g: &G, params: &MgParams, mg: &mut [f32], faces: &[f32]) {
    let levels = levels_from(params.nx, params.ny, params.b);
    let symmetric = params.colour & 1 != 0;
    let mut steps = v_cycle(&levels, params.omega, symmetric, params.zero_initial != 0, false);
    if params.colour & COARSE_OVER_RELAX != 0 {
        over_relax_coarsest(&mut steps, &levels);
    }
    for step in steps {
        match step {
            Step::Smooth(p) if g.solids => super::solid::mg_smooth(g, &p, mg, faces),
            Step::Restrict(p) if g.solids => super::solid::mg_restrict(g, &p, mg, faces),
            Step::Smooth(p) => mg_smooth::run(g, &p, mg),
            Step::Restrict(p) => mg_restrict::run(g, &p, mg),
            Step::Prolong(p) => mg_prolong::run(g, &p, mg),
            Step::Coarse(_) | Step::Smooth2(_) => unreachable!("the plain v_cycle has single passes only"),
        }
    }
}

/// The table's entry: a dispatch of `mg_coarse` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: MgParams = d.params().unwrap_or_default();
    if c.g.solids {
        let faces = s.r("mg_faces");
        return run(c.g, &p, s.w("mg"), faces);
    }
    run(c.g, &p, s.w("mg"), &[]);
}
