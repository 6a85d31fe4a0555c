//! A resource's values and their little-endian bytes: `f32` words, `f16` halves widened and
//! rounded, 32-bit words. What every backend's reads and writes, and checkpoints, convert by.

use crate::format::Format;

/// The little-endian `f32` values of `bytes` (a GPU read-back's mapped memory), in one pass
/// straight into the returned vector: no intermediate copy of the bytes, and no alignment
/// required of them. Trailing bytes short of a value are left out.
pub fn f32s_le(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// The `scalars` values of a resource of `format` from its little-endian bytes: its `f32`
/// values, or its `f16` values widened to `f32` (the padding half of an odd count left out).
pub fn values_le(format: Format, scalars: usize, bytes: &[u8]) -> Vec<f32> {
    if format.is_half() {
        bytes.chunks_exact(2).take(scalars).map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32()).collect()
    } else {
        f32s_le(bytes)
    }
}

/// `values` as the little-endian bytes of a resource of `format`: themselves, or rounded to the
/// nearest `f16` (ties to even) and padded with a zero half to whole 32-bit words.
pub fn values_to_le(format: Format, values: &[f32]) -> Vec<u8> {
    if format.is_half() {
        let mut bytes: Vec<u8> = values.iter().flat_map(|&v| half::f16::from_f32(v).to_le_bytes()).collect();
        bytes.resize(bytes.len().next_multiple_of(4), 0);
        bytes
    } else {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }
}

/// `values` rounded to the nearest `f16` (ties to even) and widened back: what a resource
/// stored in `f16` holds after they are written to it.
pub fn round_to_half(values: &mut [f32]) {
    for v in values {
        *v = half::f16::from_f32(*v).to_f32();
    }
}

/// The little-endian 32-bit words of `bytes`, as [`f32s_le`] reads values.
pub fn u32s_le(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Words as their little-endian bytes, in order: one copy on a little-endian machine.
pub fn u32s_to_le_bytes(words: &[u32]) -> Vec<u8> {
    if cfg!(target_endian = "little") {
        bytemuck::cast_slice(words).to_vec()
    } else {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// 32-bit words as the `f32` values they hold, with no copy.
pub fn words_to_f32(words: Vec<u32>) -> Vec<f32> {
    bytemuck::allocation::cast_vec(words)
}
