//! Kernels described by data: one [`KernelDesc`] per kernel, in the tables of the models and
//! here (the reductions every model shares).
//!
//! A kernel has one name in three homes: `fluid-shaders/shaders/<model>/<name>.wgsl` (entry point
//! `<name>`), its CPU twin `fluid-cpu/src/kernels/<name>.rs`, and its label `fluid.<name>` in
//! timings. Its descriptor says what the shader declares, and a test checks the two against
//! each other by naga reflection (`swirly-shaders`): group 0 holds the model's uniform (binding
//! 0), the step uniform (1), the parameter block at a dynamic offset (2, when [`KernelDesc::params`])
//! and the run's records (3, when [`KernelDesc::records`]); group 1 one storage buffer per
//! [`KernelDesc::bindings`] slot, in order.

/// How a kernel uses a binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Read only.
    Read,
    /// Written only (every element the kernel covers).
    Write,
    /// Read and written.
    ReadWrite,
}

impl Access {
    /// Whether the kernel writes it.
    pub fn writes(self) -> bool {
        self != Access::Read
    }
}

/// The element type of a storage binding as the shader declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Element {
    /// `array<f32>`.
    F32,
    /// `array<vec4<f32>>`.
    Vec4F32,
    /// `array<u32>`.
    U32,
    /// `array<vec2<f32>>`.
    Vec2F32,
    /// `array<atomic<u32>>` (counters; the CPU twin runs them as plain `u32`).
    AtomicU32,
}

/// A storage binding slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Binding {
    /// Its name in the shader.
    pub name: &'static str,
    /// How the kernel uses it.
    pub access: Access,
    /// Its element type.
    pub element: Element,
    /// Whether an empty resource may be bound to it: the kernel then leaves it alone (a field
    /// the scene does not carry, under a flag in the parameters). Binding an empty resource
    /// to any other slot is refused before a run ([`crate::lower::check_bindings`]).
    pub optional: bool,
}

impl Binding {
    /// A slot of `f32` values.
    pub const fn f32(name: &'static str, access: Access) -> Binding {
        Binding { name, access, element: Element::F32, optional: false }
    }

    /// A slot of `vec4<f32>` values.
    pub const fn vec4(name: &'static str, access: Access) -> Binding {
        Binding { name, access, element: Element::Vec4F32, optional: false }
    }

    /// A slot of `vec2<f32>` values.
    pub const fn vec2(name: &'static str, access: Access) -> Binding {
        Binding { name, access, element: Element::Vec2F32, optional: false }
    }

    /// A slot of `u32` values.
    pub const fn u32(name: &'static str, access: Access) -> Binding {
        Binding { name, access, element: Element::U32, optional: false }
    }

    /// A slot of `atomic<u32>` counters (read and written).
    pub const fn atomic(name: &'static str) -> Binding {
        Binding { name, access: Access::ReadWrite, element: Element::AtomicU32, optional: false }
    }

    /// The same slot, which may be bound to an empty resource.
    pub const fn optional(self) -> Binding {
        Binding { optional: true, ..self }
    }
}

/// The invocations a kernel is launched over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Domain {
    /// One invocation per cell: `nx × ny`.
    Cells,
    /// One per face pair: `(nx + 1) × (ny + 1)`; invocation `(i, j)` handles `u[i, j]` when
    /// `j < ny` and `v[i, j]` when `i < nx`.
    Faces,
    /// Given by each dispatch (a multigrid level, one workgroup, a count).
    Given,
}

/// How many invocations one workgroup covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Workgroup {
    /// The backend's 2D shape (`WG_X × WG_Y` in the shaders; 16 × 16 unless a backend is told
    /// otherwise).
    Tiled,
    /// Fixed by the shader: a 1D workgroup of `x` threads (`y` = 1), or a tile of `x × y`
    /// cells worked on by the workgroup's threads.
    Covers(u32, u32),
}

/// A parameter block type: a struct defined by [`wgsl_struct!`](crate::wgsl_struct), whose
/// WGSL twin is made from it.
pub trait ParamsBlock: crate::wgsl::WgslStruct {}

/// Which parameter block a kernel reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParamsDesc {
    /// The struct's name, in Rust and WGSL.
    pub name: &'static str,
    /// Its size in bytes.
    pub size: u32,
}

impl ParamsDesc {
    /// The descriptor of `T`.
    pub const fn of<T: ParamsBlock>() -> ParamsDesc {
        ParamsDesc { name: T::NAME, size: size_of::<T>() as u32 }
    }
}

/// Everything a backend and the lowering need to know of a kernel.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct KernelDesc {
    /// The shared name (shader entry point, CPU file, label).
    pub name: &'static str,
    /// The shader file it lives in: `<module>.wgsl` (its own name, but for kernels that share
    /// a file, as the reductions' two passes do).
    pub module: &'static str,
    /// The storage slots, in binding order.
    pub bindings: &'static [Binding],
    /// The parameter block it reads, if any.
    pub params: Option<ParamsDesc>,
    /// Whether it reads the run's records ([`crate::backend::Records`]: the model's splats).
    pub records: bool,
    /// What it is launched over.
    pub domain: Domain,
    /// What one workgroup covers.
    pub workgroup: Workgroup,
    /// One line: what one invocation computes.
    pub doc: &'static str,
}

/// A kernel: a reference to its descriptor (equal kernels have equal descriptors, so the
/// grid's kernels can be matched on as constants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Kernel(pub &'static KernelDesc);

impl std::ops::Deref for Kernel {
    type Target = KernelDesc;
    fn deref(&self) -> &KernelDesc {
        self.0
    }
}

impl Kernel {
    /// The label of its buffers, pipelines and timings: `fluid.<name>`.
    pub fn label(self) -> String {
        format!("fluid.{}", self.0.name)
    }

    /// The position of the slot named `slot`, if it has one.
    pub fn slot(self, slot: &str) -> Option<usize> {
        self.0.bindings.iter().position(|b| b.name == slot)
    }
}

/// Bytes of the largest parameter block: what GPU backends bind at each dynamic offset.
pub const PARAMS_MAX_BYTES: u64 = 48;
