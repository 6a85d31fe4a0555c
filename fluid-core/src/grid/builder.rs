//! The builder of grid schedules: dispatches over fields, their extents from the kernels'
//! domains. The step code (`step`) and the pressure solvers (`pressure`) both write with it.

use crate::grid::uniforms::MgParams;
use crate::grid::{FieldId, Grid};
use swirly_ir::kernel::{Domain, Kernel, ParamsBlock};
use swirly_ir::resource::ResourceId;
use swirly_ir::schedule::{MAX_BINDINGS, ParamBlock, ReduceOp, Schedule, ScheduleBuilder};

/// Builds a grid schedule: dispatches over fields, their extents from the kernels' domains.
pub(crate) struct Builder {
    grid: Grid,
    s: ScheduleBuilder,
}

impl Builder {
    pub(crate) fn new(grid: &Grid) -> Builder {
        Builder { grid: *grid, s: Schedule::builder(grid.uniform_bytes(), [grid.nx, grid.ny]) }
    }

    pub(crate) fn grid(&self) -> &Grid {
        &self.grid
    }

    /// `kernel` over its domain (cells or faces of the grid).
    pub(crate) fn run<P: ParamsBlock>(&mut self, kernel: Kernel, fields: &[FieldId], params: Option<&P>) {
        let (nx, ny) = (self.grid.nx, self.grid.ny);
        let extent = match kernel.domain {
            Domain::Cells => [nx, ny],
            Domain::Faces => [nx + 1, ny + 1],
            Domain::Given => unreachable!("{} is run over a given extent", kernel.name),
        };
        self.run_over(kernel, fields, params, extent);
    }

    /// `kernel` over `extent` invocations (a level, one workgroup).
    pub(crate) fn run_over<P: ParamsBlock>(
        &mut self,
        kernel: Kernel,
        fields: &[FieldId],
        params: Option<&P>,
        extent: [u32; 2],
    ) {
        let mut ids = [ResourceId(0); MAX_BINDINGS];
        for (id, f) in ids.iter_mut().zip(fields) {
            *id = (*f).into();
        }
        self.s.dispatch(kernel, &ids[..fields.len()], params.map(ParamBlock::new), extent);
    }

    /// A kernel without a parameter block.
    pub(crate) fn run_plain(&mut self, kernel: Kernel, fields: &[FieldId]) {
        self.run::<MgParams>(kernel, fields, None);
    }

    pub(crate) fn swap(&mut self, a: FieldId, b: FieldId) {
        self.s.swap(a.into(), b.into());
    }

    pub(crate) fn reduce(&mut self, field: FieldId, op: ReduceOp, slot: usize) {
        self.s.reduce(field.into(), op, slot);
    }

    /// The ops so far.
    pub(crate) fn ops(&self) -> &[swirly_ir::schedule::Op] {
        self.s.ops()
    }

    pub(crate) fn build(self) -> Schedule {
        self.s.build()
    }
}
