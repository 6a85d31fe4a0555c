//! What a CPU kernel's `dispatch` receives: the context of the step and its dispatch's
//! resources bound to slices. Which function runs a kernel is `kernels::TABLE`.

use fluid_core::frame::uniform::SplatGpu;
use fluid_core::ir::schedule::Dispatch;
use fluid_core::{Error, Kernel, Result};

use crate::kernels::common::G;

/// What a kernel gets besides its bindings.
pub struct Ctx<'a> {
    /// The grid of the schedule's uniform.
    pub g: &'a G,
    /// The step's time step.
    pub dt: f32,
    /// Simulated time at the start of the step.
    pub time: f32,
    /// The step's splats, in the kernels' layout.
    pub splats: &'a [SplatGpu],
    /// Scratch the backend keeps between steps (`apply_forces`, `relax`, `mg_smooth2`).
    pub scratch: &'a mut Vec<f32>,
}

/// A kernel's CPU entry: its dispatch's parameters and slots in, its outputs written.
pub type KernelFn = fn(&mut Ctx<'_>, &Dispatch, Slots<'_>);

/// Most binding slots of a kernel.
pub const MAX_SLOTS: usize = 8;

enum Slot<'a> {
    Read(&'a [f32]),
    Write(&'a mut [f32]),
    Taken,
}

/// A dispatch's bindings as slices, in slot order: read slots shared, written ones exclusive.
pub struct Slots<'a> {
    slots: [Slot<'a>; MAX_SLOTS],
}

impl<'a> Slots<'a> {
    /// Slot `i`, to read. (Slots a kernel writes are taken with [`Slots::w`].)
    pub fn r(&self, i: usize) -> &'a [f32] {
        match &self.slots[i] {
            Slot::Read(x) => x,
            _ => &[],
        }
    }

    /// Slot `i`, to write (once).
    pub fn w(&mut self, i: usize) -> &'a mut [f32] {
        match std::mem::replace(&mut self.slots[i], Slot::Taken) {
            Slot::Write(x) => x,
            _ => &mut [],
        }
    }
}

/// Bind `phys` (one physical buffer per slot) of `buffers`: every buffer a slot writes is bound
/// to that slot alone, every other one shared by the slots that read it. A buffer written by
/// one slot and bound to another is an error (no kernel aliases its outputs).
pub fn bind<'a>(buffers: &'a mut [Vec<f32>], phys: &[usize], lens: &[usize], kernel: Kernel) -> Result<Slots<'a>> {
    let writes = |i: usize| kernel.bindings[i].access.writes();
    for (i, p) in phys.iter().enumerate() {
        if writes(i) && phys.iter().enumerate().any(|(k, q)| k != i && q == p) {
            return Err(Error::Backend {
                backend: "cpu",
                message: format!("{} binds the buffer it writes in slot {i} to another slot too", kernel.name),
            });
        }
    }
    let mut slots: [Slot<'a>; MAX_SLOTS] = std::array::from_fn(|_| Slot::Taken);
    for (b, buffer) in buffers.iter_mut().enumerate() {
        let mut users = phys.iter().enumerate().filter(|(_, p)| **p == b).map(|(i, _)| i).peekable();
        let Some(&first) = users.peek() else { continue };
        // A slot sees its resource's values only (a transient's buffer may be larger).
        let len = lens[first].min(buffer.len());
        if writes(first) {
            slots[first] = Slot::Write(&mut buffer[..len]);
        } else {
            let shared: &'a [f32] = &buffer[..len];
            for i in users {
                slots[i] = Slot::Read(shared);
            }
        }
    }
    Ok(Slots { slots })
}
