//! What a CPU kernel's `dispatch` receives: the context of the step and its dispatch's
//! resources bound to slices. Which function runs a kernel is `kernels::TABLE`.

use swirly_core::frame::uniform::SplatGpu;
use swirly_core::ir::schedule::Dispatch;
use swirly_core::{Error, Kernel, Result};

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
pub type KernelFn = fn(&mut Ctx<'_>, &Dispatch, &mut Slots<'_>);

/// Most binding slots of a kernel.
pub const MAX_SLOTS: usize = 8;

enum Slot<'a> {
    Read(&'a [f32]),
    Write(&'a mut [f32]),
    Taken,
}

/// A dispatch's bindings as slices, taken by the names of the kernel's descriptor: read slots
/// shared, written ones exclusive. A name the descriptor does not have, a read of a slot it
/// writes or a second take of a written slot gives an empty slice and is remembered:
/// [`Slots::check`] turns it into the dispatch's error, so a twin cannot read the wrong field
/// unnoticed (every kernel runs in the conformance suite).
pub struct Slots<'a> {
    slots: [Slot<'a>; MAX_SLOTS],
    kernel: Kernel,
    wrong: Option<String>,
}

impl<'a> Slots<'a> {
    fn index(&mut self, name: &str, writes: bool) -> Option<usize> {
        let found = self.kernel.bindings.iter().position(|b| b.name == name);
        match found {
            Some(i) if self.kernel.bindings[i].access.writes() == writes => Some(i),
            Some(_) => {
                let how = if writes { "writes" } else { "reads" };
                self.wrong.get_or_insert_with(|| format!("its CPU twin {how} slot `{name}` against its access"));
                None
            }
            None => {
                self.wrong.get_or_insert_with(|| format!("its CPU twin takes a slot `{name}` it does not declare"));
                None
            }
        }
    }

    /// The slot named `name`, to read. (Slots a kernel writes are taken with [`Slots::w`].)
    pub fn r(&mut self, name: &str) -> &'a [f32] {
        match self.index(name, false).map(|i| &self.slots[i]) {
            Some(Slot::Read(x)) => x,
            _ => &[],
        }
    }

    /// The slot named `name`, to write (once).
    pub fn w(&mut self, name: &str) -> &'a mut [f32] {
        let Some(i) = self.index(name, true) else { return &mut [] };
        match std::mem::replace(&mut self.slots[i], Slot::Taken) {
            Slot::Write(x) => x,
            _ => {
                self.wrong.get_or_insert_with(|| format!("its CPU twin takes slot `{name}` twice"));
                &mut []
            }
        }
    }

    /// The first wrong take of a slot, as the dispatch's error.
    pub fn check(self) -> Result<()> {
        match self.wrong {
            None => Ok(()),
            Some(problem) => {
                Err(Error::Backend { backend: "cpu", message: format!("{}: {problem}", self.kernel.name) })
            }
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
    Ok(Slots { slots, kernel, wrong: None })
}

#[cfg(test)]
mod tests {
    use super::*;
    use swirly_core::grid::kernels::DIVERGENCE;

    /// `divergence`'s slots (u, v, u_faces, v_faces, divergence) bound to buffers of their index.
    fn with_slots(take: impl FnOnce(&mut Slots<'_>)) -> Result<()> {
        let mut buffers: Vec<Vec<f32>> = (0..5).map(|i| vec![i as f32; 3]).collect();
        let mut slots = bind(&mut buffers, &[0, 1, 2, 3, 4], &[3; 5], DIVERGENCE)?;
        take(&mut slots);
        slots.check()
    }

    #[test]
    fn slots_are_taken_by_the_descriptors_names() {
        with_slots(|s| {
            assert_eq!(s.r("v"), &[1.0; 3]);
            assert_eq!(s.w("divergence"), &mut [4.0; 3]);
        })
        .expect("the declared slots");
    }

    #[test]
    fn a_wrong_take_of_a_slot_is_the_dispatchs_error() {
        for (take, says) in [
            (&(|s: &mut Slots<'_>| _ = s.r("velocity")) as &dyn Fn(&mut Slots<'_>), "`velocity` it does not declare"),
            (&|s: &mut Slots<'_>| _ = s.r("divergence"), "reads slot `divergence`"),
            (&|s: &mut Slots<'_>| _ = s.w("u"), "writes slot `u`"),
            (&|s: &mut Slots<'_>| _ = (s.w("divergence"), s.w("divergence")), "takes slot `divergence` twice"),
        ] {
            let e = with_slots(take).expect_err(says).to_string();
            assert!(e.contains("divergence") && e.contains(says), "{e}");
        }
    }
}
