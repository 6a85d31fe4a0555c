//! The WGSL declarations of the blocks the kernels read (parameter blocks, uniforms, splat
//! records), made from their Rust definitions: [`wgsl_struct!`](crate::wgsl_struct) defines a
//! `#[repr(C)]` struct and lists its members with their offsets, and [`declaration`] writes the
//! struct WGSL declares. `cargo xtask shaders` writes every block's declaration into
//! `fluid-shaders/shaders/shared/params.wgsl` (checked fresh in CI), and `swirly-shaders`'
//! reflection test compares each member's offset in the compiled shaders with Rust's.

/// A Rust type a block's member may have, and the WGSL type it is.
pub trait WgslType {
    /// Its WGSL type.
    const WGSL: &'static str;
    /// Its scalar element type (itself for a scalar).
    const SCALAR: &'static str;
    /// Its scalars (1 for a scalar).
    const LEN: usize;
}

macro_rules! wgsl_types {
    ($($t:ty => $wgsl:literal, $scalar:literal, $len:literal;)*) => {
        $(impl WgslType for $t {
            const WGSL: &'static str = $wgsl;
            const SCALAR: &'static str = $scalar;
            const LEN: usize = $len;
        })*
    };
}

wgsl_types! {
    u32 => "u32", "u32", 1;
    i32 => "i32", "i32", 1;
    f32 => "f32", "f32", 1;
    [u32; 2] => "vec2<u32>", "u32", 2;
    [i32; 2] => "vec2<i32>", "i32", 2;
    [f32; 2] => "vec2<f32>", "f32", 2;
    [u32; 3] => "vec3<u32>", "u32", 3;
    [f32; 3] => "vec3<f32>", "f32", 3;
    [u32; 4] => "vec4<u32>", "u32", 4;
    [i32; 4] => "vec4<i32>", "i32", 4;
    [f32; 4] => "vec4<f32>", "f32", 4;
    [f32; 8] => "array<vec4<f32>, 2>", "vec4<f32>", 2;
    [[f32; 4]; 4] => "array<vec4<f32>, 4>", "vec4<f32>", 4;
}

/// One member of a block: its name, WGSL type and byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    /// Its name, in Rust and WGSL.
    pub name: &'static str,
    /// Its WGSL type.
    pub wgsl: &'static str,
    /// Its scalar element type.
    pub scalar: &'static str,
    /// Its scalars.
    pub len: usize,
    /// Its offset in the Rust struct, in bytes.
    pub offset: usize,
}

impl Member {
    /// The member `name` of type `T` at `offset`.
    pub const fn of<T: WgslType>(name: &'static str, offset: usize) -> Member {
        Member { name, wgsl: T::WGSL, scalar: T::SCALAR, len: T::LEN, offset }
    }

    /// Padding (a name starting with `_`): WGSL declares each of its scalars on its own
    /// (`_pad0`, `_pad1`, …), which keeps them at their offsets where a `vec3` would move.
    pub fn is_padding(&self) -> bool {
        self.name.starts_with('_')
    }

    /// The members WGSL declares for it: `(name, type, offset)`.
    pub fn declared(&self) -> Vec<(String, &'static str, usize)> {
        if self.is_padding() && self.len > 1 {
            (0..self.len).map(|k| (format!("{}{k}", self.name), self.scalar, self.offset + 4 * k)).collect()
        } else {
            vec![(self.name.to_string(), self.wgsl, self.offset)]
        }
    }
}

/// A block whose WGSL twin is made from its Rust definition ([`wgsl_struct!`](crate::wgsl_struct)).
pub trait WgslStruct: bytemuck::Pod {
    /// The struct's name, in Rust and WGSL.
    const NAME: &'static str;
    /// Its members, in order.
    const MEMBERS: &'static [Member];
}

/// A block's name, members and size: what [`declaration`] writes and the reflection checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The struct's name.
    pub name: &'static str,
    /// Its members.
    pub members: &'static [Member],
    /// Its size in bytes.
    pub size: usize,
}

impl Layout {
    /// The layout of `T`.
    pub const fn of<T: WgslStruct>() -> Layout {
        Layout { name: T::NAME, members: T::MEMBERS, size: size_of::<T>() }
    }
}

/// The WGSL declaration of `layout`.
pub fn declaration(layout: &Layout) -> String {
    let mut out = format!("struct {} {{\n", layout.name);
    for m in layout.members {
        for (name, ty, _) in m.declared() {
            out.push_str(&format!("    {name}: {ty},\n"));
        }
    }
    out.push_str("}\n");
    out
}

/// Defines `#[repr(C)]` structs (their attributes and members as written) and their
/// [`WgslStruct`] impls: the one definition of a block both the CPU and the shaders read.
#[macro_export]
macro_rules! wgsl_struct {
    ($($(#[$m:meta])* pub struct $t:ident { $($(#[$fm:meta])* pub $f:ident : $ty:ty),* $(,)? })*) => {
        $(
            $(#[$m])*
            #[repr(C)]
            pub struct $t { $($(#[$fm])* pub $f: $ty,)* }
            impl $crate::wgsl::WgslStruct for $t {
                const NAME: &'static str = stringify!($t);
                const MEMBERS: &'static [$crate::wgsl::Member] =
                    &[$($crate::wgsl::Member::of::<$ty>(stringify!($f), ::core::mem::offset_of!($t, $f)),)*];
            }
        )*
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytemuck::{Pod, Zeroable};

    crate::wgsl_struct! {
        /// A block of every kind of member.
        #[derive(Clone, Copy, Pod, Zeroable)]
        pub struct Sample {
            pub a: u32,
            pub c: f32,
            pub b: [f32; 2],
            pub _pad: [u32; 3],
            pub e: f32,
            pub d: [f32; 4],
        }
    }

    #[test]
    fn a_declaration_lists_the_members_and_expands_padding() {
        let text = declaration(&Layout::of::<Sample>());
        assert_eq!(
            text,
            "struct Sample {\n    a: u32,\n    c: f32,\n    b: vec2<f32>,\n    _pad0: u32,\n    _pad1: u32,\n    \
             _pad2: u32,\n    e: f32,\n    d: vec4<f32>,\n}\n"
        );
        let offsets: Vec<usize> = Sample::MEMBERS.iter().flat_map(|m| m.declared()).map(|(_, _, o)| o).collect();
        assert_eq!(offsets, [0, 4, 8, 16, 20, 24, 28, 32]);
    }
}
