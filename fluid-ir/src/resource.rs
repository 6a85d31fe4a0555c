//! Resources: the typed, named buffers a model declares and a backend allocates.
//!
//! A model lists its resources as [`ResourceDesc`]s; [`ResourceId`]`(i)` names the `i`-th of
//! that list in schedules, reads and writes. A backend allocates exactly that list
//! ([`crate::backend::Backend::allocate`]): a resource a scene does not need is declared empty (no
//! elements) and takes no memory.

use crate::error::{Error, Result};
pub use crate::format::Format;

/// Index of a resource in its model's list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct ResourceId(pub u32);

impl ResourceId {
    /// The position in the model's list.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where a resource's elements sit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// One element per cell of the model's grid, row by row from the bottom.
    Cells,
    /// One element per x-face: `(nx + 1) × ny`.
    XFaces,
    /// One element per y-face: `nx × (ny + 1)`.
    YFaces,
    /// A multigrid hierarchy packed level after level (with whatever a solver keeps beside it).
    Levels,
    /// A plain count of elements (particles, keys, a histogram).
    Elements,
}

/// Whether a resource is part of the state (what a checkpoint saves and a reset clears to the
/// initial conditions), scratch a step may overwrite, or transient scratch that lives only
/// within one run and may share its memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lifetime {
    /// Simulation state.
    State,
    /// Working memory of the kernels, kept between runs (ping-pong partners that swaps turn
    /// into state, values a later run or a read takes).
    Scratch,
    /// Working memory whose contents live only within one run, from the dispatch that first
    /// writes it to the last that touches it. Transient resources that name the same group
    /// share one allocation (the largest member's size): the schedules must never have two
    /// of them live at once, never swap one, nor read one before writing it, which
    /// [`crate::lower::check_transients`] enforces. Backends refuse to read or write one.
    Transient {
        /// The group whose members share memory.
        shares: &'static str,
    },
}

/// A resource as a model declares it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ResourceDesc {
    /// Its name: `fluid.<name>` labels its buffer.
    pub name: &'static str,
    /// Where its elements sit.
    pub shape: Shape,
    /// How each element is stored.
    pub format: Format,
    /// State or scratch.
    pub lifetime: Lifetime,
    /// Number of elements; 0 for a resource the scene does not need (nothing is allocated).
    pub len: u64,
    /// The model grid (`nx`, `ny`) its shape is counted on; `[0, 0]` for a plain count. A
    /// schedule built for another grid is refused before it touches the resource.
    pub grid: [u32; 2],
}

impl ResourceDesc {
    /// A resource of `len` elements.
    pub fn new(name: &'static str, shape: Shape, format: Format, lifetime: Lifetime, len: u64) -> ResourceDesc {
        ResourceDesc { name, shape, format, lifetime, len, grid: [0, 0] }
    }

    /// The same resource, counted on the model grid `nx × ny`.
    pub fn on_grid(self, nx: u32, ny: u32) -> ResourceDesc {
        ResourceDesc { grid: [nx, ny], ..self }
    }

    /// An error unless a schedule for the grid `grid` may bind it.
    pub fn check_grid(&self, grid: [u32; 2]) -> Result<()> {
        if self.grid == [0, 0] || self.grid == grid {
            return Ok(());
        }
        Err(Error::invalid(
            "schedule",
            format!("{}x{}", grid[0], grid[1]),
            format!(
                "it was built for another grid than the resources' (`{}` is counted on {}x{})",
                self.name, self.grid[0], self.grid[1]
            ),
        ))
    }

    /// The same resource, declared empty: what a scene that does not use it allocates.
    pub fn empty(self) -> ResourceDesc {
        ResourceDesc { len: 0, ..self }
    }

    /// Bytes it takes.
    pub fn bytes(&self) -> u64 {
        self.format.bytes(self.len)
    }

    /// 32-bit words it takes.
    pub fn words(&self) -> u64 {
        self.bytes() / 4
    }

    /// Scalar values it holds (what [`crate::backend::Backend::download`] returns as `f32`).
    pub fn scalars(&self) -> u64 {
        self.len * self.format.scalars_per_element()
    }

    /// Its values from its little-endian bytes, `f16` widened to `f32`
    /// ([`crate::bytes::values_le`]).
    pub fn values_le(&self, bytes: &[u8]) -> Vec<f32> {
        crate::bytes::values_le(self.format, self.scalars() as usize, bytes)
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Its sharing group, where it is [`Lifetime::Transient`].
    pub fn shares(&self) -> Option<&'static str> {
        match self.lifetime {
            Lifetime::Transient { shares } => Some(shares),
            _ => None,
        }
    }

    /// An error unless `bytes` is its size, for writes: in `f32` values for a resource of them
    /// written whole values at a time (what `upload` hands over), else in bytes.
    pub fn check_bytes(&self, bytes: usize) -> Result<()> {
        let bytes = bytes as u64;
        if bytes == self.bytes() {
            return Ok(());
        }
        if self.format.is_f32() && bytes.is_multiple_of(4) {
            Err(Error::FieldLength { field: self.name, expected: self.words() as usize, got: (bytes / 4) as usize })
        } else {
            Err(Error::ResourceLength { resource: self.name.to_string(), expected: self.bytes(), got: bytes })
        }
    }
}

/// For each resource, the index of the resource whose memory it uses: its own, or for a
/// non-empty transient the largest non-empty member of its group (the first of equals). A
/// backend allocates memory for the owners only ([`ResourceDesc::bytes`] of each) and starts
/// every resource's assignment at its owner.
pub fn owners(resources: &[ResourceDesc]) -> Vec<usize> {
    (0..resources.len())
        .map(|i| {
            let r = &resources[i];
            match r.shares() {
                Some(group) if !r.is_empty() => (0..resources.len())
                    .filter(|&j| resources[j].shares() == Some(group) && !resources[j].is_empty())
                    .fold(i, |best, j| {
                        let (b, c) = (resources[best].bytes(), resources[j].bytes());
                        if c > b || (c == b && j < best) { j } else { best }
                    }),
                _ => i,
            }
        })
        .collect()
}

/// What a backend holds for the resources it allocated, from its own accounting.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryReport {
    /// Each resource's name and the bytes allocated for it (its buffer may be larger than its
    /// elements: alignment, a minimum size). A transient group's memory counts once, under its
    /// owner ([`owners`]); the other members count 0.
    pub resources: Vec<(&'static str, u64)>,
    /// Everything the backend allocated on its device or in memory: resources, its own
    /// buffers (uniforms, staging, reduction results, kernels' scratch).
    pub total: u64,
    /// Device memory its allocator holds to place those allocations in (whole blocks), where
    /// the backend sub-allocates; else `total`.
    pub reserved: u64,
    /// The most it has held at once since it was made, within operations too: the new
    /// buffers of an allocation beside the old, a read's staging buffer, a grown splat buffer
    /// beside the one it replaces (at least `total`). Measurements of the device itself
    /// (`copy_bandwidth`) are left out.
    pub peak: u64,
}
