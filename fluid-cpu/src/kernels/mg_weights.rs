//! `mg_weights`: with obstacles, the face weights of one multigrid level (each cell's right and
//! top face): level 0's from the grid's faces, a coarser level's the mean of the finer faces it
//! covers. The arithmetic is in [`super::solid::mg_faces`].

use swirly_core::grid::uniforms::MgParams;

use crate::dispatch::{Ctx, Slots};
use swirly_core::ir::schedule::Dispatch;

/// The table's entry: a dispatch of `mg_weights` on the CPU.
pub(crate) fn dispatch(c: &mut Ctx<'_>, d: &Dispatch, s: &mut Slots<'_>) {
    let p: MgParams = d.params().unwrap_or_default();
    super::solid::mg_faces(c.g, &p, (s.r("u_faces"), s.r("v_faces")), s.w("mg_faces"));
}
