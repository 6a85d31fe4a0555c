//! The blocks every kernel of every model reads besides its own parameters: the frame's
//! uniform (group 0, binding 0) and the grid's splat record (the records of binding 3, which
//! the particle liquid's pointer reads too). Each is defined by [`swirly_ir::wgsl_struct!`]
//! (`#[repr(C)]`, [`bytemuck::Pod`], a multiple of 16 bytes); its WGSL declaration in
//! `fluid-shaders/shaders/shared/params.wgsl` is generated from it, and `swirly-shaders`
//! checks every member's offset there by reflection.

use bytemuck::{Pod, Zeroable};

swirly_ir::wgsl_struct! {
    /// The grid, seen by every kernel.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct GridUniform {
        /// Cells along x.
        pub nx: u32,
        /// Cells along y.
        pub ny: u32,
        /// Cell side.
        pub h: f32,
        /// `1 / h`.
        pub inv_h: f32,
        /// [`crate::frame::Boundary::code`] along x.
        pub boundary_x: u32,
        /// [`crate::frame::Boundary::code`] along y.
        pub boundary_y: u32,
        /// Always 0: a value the shader compiler cannot know, through which the double-float
        /// arithmetic passes its intermediate sums (`opaque` in `shared/double_float.wgsl`) so that
        /// no algebraic simplification (`(a + b) − a → b`, which Mesa applies to operations not
        /// marked exact, and naga cannot mark them) removes the rounding error it computes.
        pub zero: u32,
        /// 1 when obstacles cut the faces (the grid's `solids`): the kernels that bind
        /// `u_faces` and `v_faces` weight each face by its open fraction.
        pub solids: u32,
        /// [`crate::frame::Side::code`] of the left, right, bottom and top sides.
        pub sides: [u32; 4],
        /// [`crate::frame::Side::speed`] of each side.
        pub side_speed: [f32; 4],
        /// [`crate::frame::Side::carry`] of each side: density, temperature, stripes, 0.
        pub side_carry: [[f32; 4]; 4],
        /// The dye each side carries in.
        pub side_dye: [[f32; 4]; 4],
    }
}

/// Falloff code for [`SplatGpu::falloff`]: `1 − d/r`, zero beyond `r` (a cone).
pub const FALLOFF_LINEAR: u32 = 0;
/// Falloff code for [`SplatGpu::falloff`]: `exp(−d²/r²)` (GPU Gems).
pub const FALLOFF_GAUSSIAN: u32 = 1;
/// Falloff code for [`SplatGpu::falloff`]: 1 where `d² < r²`, else 0 (a hard disc).
pub const FALLOFF_CONSTANT: u32 = 2;

swirly_ir::wgsl_struct! {
    /// One splat as the kernels see it; world units.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
    pub struct SplatGpu {
        /// Centre (x, y).
        pub center: [f32; 2],
        /// Radius.
        pub radius: f32,
        /// [`FALLOFF_LINEAR`], [`FALLOFF_GAUSSIAN`] or [`FALLOFF_CONSTANT`].
        pub falloff: u32,
        /// Velocity added at the centre.
        pub velocity: [f32; 2],
        /// Density added at the centre.
        pub density: f32,
        /// Temperature added at the centre.
        pub temperature: f32,
        /// RGBA dye added at the centre.
        pub dye: [f32; 4],
        /// Fuel added at the centre.
        pub fuel: f32,
        /// Padding (the struct is 16-byte aligned in WGSL).
        pub _pad: [f32; 3],
    }
}

const _: () = {
    assert!(size_of::<GridUniform>() == swirly_ir::schedule::UNIFORM_BYTES);
    assert!(size_of::<SplatGpu>() == 64);
};
