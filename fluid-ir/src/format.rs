//! How a resource's elements are stored: [`Format`].

/// How one element is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// One `f32`.
    F32,
    /// One `f16`, two to a 32-bit word (a storage format: kernels compute in `f32`).
    F16,
    /// One `u32`.
    U32,
    /// Two `f32` (a position, a velocity).
    Vec2F32,
    /// Four `f32` (RGBA dye).
    Vec4F32,
    /// Four `f16` (RGBA dye in half precision: a storage format, as [`Format::F16`]).
    Vec4F16,
    /// Four 8-bit channels packed in a `u32` (a picture).
    Rgba8,
}

impl Format {
    /// Bytes of `elements` elements, rounded up to whole 32-bit words.
    pub fn bytes(self, elements: u64) -> u64 {
        let raw = match self {
            Format::F16 => 2 * elements,
            Format::F32 | Format::U32 | Format::Rgba8 => 4 * elements,
            Format::Vec4F16 => 8 * elements,
            Format::Vec2F32 => 8 * elements,
            Format::Vec4F32 => 16 * elements,
        };
        raw.next_multiple_of(4)
    }

    /// 32-bit values per element for the formats made of them (`f32`, `u32`, vectors, RGBA8);
    /// `None` for `f16`, two of which share a word.
    pub fn words_per_element(self) -> Option<u64> {
        match self {
            Format::F16 => None,
            Format::F32 | Format::U32 | Format::Rgba8 => Some(1),
            Format::Vec2F32 | Format::Vec4F16 => Some(2),
            Format::Vec4F32 => Some(4),
        }
    }

    /// Scalar values per element (4 for RGBA, 1 for a packed picture's word).
    pub fn scalars_per_element(self) -> u64 {
        match self {
            Format::F16 | Format::F32 | Format::U32 | Format::Rgba8 => 1,
            Format::Vec2F32 => 2,
            Format::Vec4F32 | Format::Vec4F16 => 4,
        }
    }

    /// Whether it stores `f16` values (that kernels read as `f32`).
    pub fn is_half(self) -> bool {
        matches!(self, Format::F16 | Format::Vec4F16)
    }

    /// The same values in `f16` storage: `f32` → `f16`, RGBA → half RGBA; others as they are.
    pub fn half(self) -> Format {
        match self {
            Format::F32 => Format::F16,
            Format::Vec4F32 => Format::Vec4F16,
            other => other,
        }
    }

    /// Whether its values are floats that kernels read as `f32` (what reductions take).
    pub fn is_float(self) -> bool {
        self.is_f32() || self.is_half()
    }

    /// Whether its words are `f32` values (what reductions and `f32` reads take).
    pub fn is_f32(self) -> bool {
        matches!(self, Format::F32 | Format::Vec2F32 | Format::Vec4F32)
    }
}
