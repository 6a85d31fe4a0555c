//! `.npy` output (NumPy format 1.0): little-endian float32, C order.

use std::io::Write;

/// The `.npy` header of a little-endian float32 array of `shape`, C order: magic, version,
/// length and the header dictionary padded with spaces so the data starts at a multiple of 64.
pub fn header_f32(shape: &[usize]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    let shape_text = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape_text}, }}");
    // Magic (6) + version (2) + length (2) + header, padded with spaces to a multiple of 64, ending in '\n'.
    let total = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out
}

/// Write `data` with `shape` to `w` as a `.npy` file, a block at a time (no copy of the
/// whole array).
pub fn write_to(mut w: impl Write, shape: &[usize], data: &[f32]) -> std::io::Result<()> {
    debug_assert_eq!(shape.iter().product::<usize>(), data.len());
    w.write_all(&header_f32(shape))?;
    let mut block = Vec::with_capacity(4 * 16384);
    for chunk in data.chunks(16384) {
        block.clear();
        block.extend(chunk.iter().flat_map(|x| x.to_le_bytes()));
        w.write_all(&block)?;
    }
    w.flush()
}

/// Write a `.npy` file: into `<path>.part`, renamed to `path` once whole, so a failure (a
/// full disk) leaves no truncated file behind (nor the part).
pub fn write_f32(path: &std::path::Path, shape: &[usize], data: &[f32]) -> std::io::Result<()> {
    crate::whole::write_whole(path, |file| write_to(std::io::BufWriter::new(file), shape, data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_aligned_and_data_follows() {
        let mut bytes = Vec::new();
        write_to(&mut bytes, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).expect("write");
        assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
        let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + hlen) % 64, 0);
        let header = std::str::from_utf8(&bytes[10..10 + hlen]).expect("ascii");
        assert!(header.contains("'shape': (2, 3)") && header.ends_with('\n'), "{header}");
        assert_eq!(&bytes[10 + hlen..10 + hlen + 4], &1.0f32.to_le_bytes());
        assert_eq!(bytes.len(), 10 + hlen + 24);
    }

    /// Whole arrays, past one block, arrive in order; a file that cannot be finished (its name
    /// is a folder) leaves neither it nor its part behind.
    #[test]
    fn files_are_written_whole_or_not_at_all() {
        let data: Vec<f32> = (0..40_000).map(|k| k as f32 * 0.25).collect();
        let mut bytes = Vec::new();
        write_to(&mut bytes, &[200, 200], &data).expect("write");
        let body = &bytes[bytes.len() - 4 * data.len()..];
        assert!(body.chunks_exact(4).zip(&data).all(|(b, x)| b == x.to_le_bytes()));
        let dir = std::env::temp_dir().join(format!("fluid-npy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let taken = dir.join("taken.npy");
        std::fs::create_dir_all(taken.join("inside")).expect("a folder where the file goes");
        assert!(write_f32(&taken, &[200, 200], &data).is_err());
        assert!(!dir.join("taken.npy.part").exists());
        let ok = dir.join("ok.npy");
        write_f32(&ok, &[200, 200], &data).expect("write");
        assert_eq!(std::fs::read(&ok).expect("read"), bytes);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
