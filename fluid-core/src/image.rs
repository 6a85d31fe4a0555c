//! The PNG images a scene names (a mask obstacle's `image`, `render.background_image`): a
//! built-in one by its bare name ([`PRESET_IMAGES`]), or a file. A file is read only when it is
//! a regular file (a FIFO, a device or a folder is refused, naming what it is), at most
//! [`MAX_IMAGE_BYTES`] of it, and its size in pixels is checked against [`MAX_IMAGE_SIDE`]
//! and [`MAX_IMAGE_PIXELS`] from its header, before any pixel is decoded. Pixels are handed on
//! a row at a time, so that a mask is sampled down as it is read. Which folder a scene's file
//! names are read from is the scene's business.

use std::borrow::Cow;
use std::io::Read;

/// Images the built-in scenes use, by the name they give.
pub const PRESET_IMAGES: &[(&str, &[u8])] =
    &[("grate.png", include_bytes!("../scenes/grate.png")), ("bricks.png", include_bytes!("../scenes/bricks.png"))];

/// The most bytes read of an image file: 16 MiB.
pub const MAX_IMAGE_BYTES: u64 = 16 << 20;
/// The most pixels along either side of an image.
pub const MAX_IMAGE_SIDE: u32 = 16384;
/// The most pixels of an image in all (4096 × 4096).
pub const MAX_IMAGE_PIXELS: u64 = 1 << 24;

/// PNG's first eight bytes.
const SIGNATURE: &[u8; 8] = b"\x89PNG\r\n\x1a\n";

/// The built-in image of that name (`grate.png`), where `path` is one.
pub fn built_in(path: &str) -> Option<&'static [u8]> {
    PRESET_IMAGES.iter().find(|(n, _)| *n == path).map(|(_, bytes)| *bytes)
}

/// What a file that is not a regular file is, for messages.
fn what_it_is(kind: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() { "a folder" } else { "not a regular file" }
}

/// Why a file could not be opened or read, in words: "no such file", "permission denied",
/// or the system's own message.
pub(crate) fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => format!("cannot read it: {e}"),
    }
}

/// The bytes of the regular file at `path`, at most `cap` of them; `what` names what a file
/// there should be (`a PNG image`). Anything else (no such file, a FIFO, a device, a
/// folder, a file longer than `cap`) is an error saying which, before more than `cap` bytes
/// are read, and a FIFO is never opened (which would wait for a writer).
pub(crate) fn regular_file(path: &std::path::Path, cap: u64, what: &str) -> Result<Vec<u8>, String> {
    let not_regular = |kind| format!("it is {}, not {what} (only regular files are read)", what_it_is(kind));
    let meta = std::fs::metadata(path).map_err(|e| io_reason(&e))?;
    if !meta.is_file() {
        return Err(not_regular(meta.file_type()));
    }
    let too_long = |len: u64| format!("it holds {len} bytes, more than the {cap} ({}) read of {what}", mib(cap));
    if meta.len() > cap {
        return Err(too_long(meta.len()));
    }
    let file = std::fs::File::open(path).map_err(|e| io_reason(&e))?;
    // What was opened may not be what was looked at: look again at the open file.
    let meta = file.metadata().map_err(|e| io_reason(&e))?;
    if !meta.is_file() {
        return Err(not_regular(meta.file_type()));
    }
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes).map_err(|e| io_reason(&e))?;
    if bytes.len() as u64 > cap {
        return Err(too_long(bytes.len() as u64));
    }
    Ok(bytes)
}

/// `bytes` in MiB, for messages.
fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes as f64 / 1048576.0)
}

/// The bytes of the image `path` names: a built-in image by its bare name (never a file of
/// that name), else the regular file at `path`.
pub(crate) fn image_bytes(path: &str) -> Result<Cow<'static, [u8]>, String> {
    if let Some(bytes) = built_in(path) {
        return Ok(Cow::Borrowed(bytes));
    }
    regular_file(std::path::Path::new(path), MAX_IMAGE_BYTES, "a PNG image").map(Cow::Owned)
}

/// What takes a decoded image's rows: `row(width, height, y, pixels)`.
pub(crate) type Rows<'a> = dyn FnMut(u32, u32, usize, &[[u8; 4]]) + 'a;

/// Decode the PNG `bytes` as RGBA8 (an image without alpha is opaque), handing `row` each
/// row from the top in turn: `row(width, height, y, pixels)`. The size is checked against the
/// limits from the header before any pixel is decoded. Returns the size.
pub(crate) fn decode_rows(bytes: &[u8], row: &mut Rows<'_>) -> Result<(u32, u32), String> {
    if !bytes.starts_with(SIGNATURE) {
        return Err("not a PNG image: it does not begin with PNG's signature".to_string());
    }
    let bad = |e: png::DecodingError| format!("not a PNG image this program reads: {e}");
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let header = decoder.read_header_info().map_err(bad)?;
    let (w, h, interlaced) = (header.width, header.height, header.interlaced);
    if w > MAX_IMAGE_SIDE || h > MAX_IMAGE_SIDE || u64::from(w) * u64::from(h) > MAX_IMAGE_PIXELS {
        return Err(format!(
            "its header says {w} x {h} pixels, more than this program decodes ({MAX_IMAGE_SIDE} along a side, \
             {MAX_IMAGE_PIXELS} pixels in all)"
        ));
    }
    let mut reader = decoder.read_info().map_err(bad)?;
    let (colour, depth) = reader.output_color_type();
    if depth != png::BitDepth::Eight {
        return Err(format!("{depth:?} samples after conversion to 8 bits"));
    }
    let step = colour.samples();
    let rgba = |p: &[u8]| -> [u8; 4] {
        match colour {
            png::ColorType::Grayscale => [p[0], p[0], p[0], 255],
            png::ColorType::GrayscaleAlpha => [p[0], p[0], p[0], p[1]],
            png::ColorType::Rgb | png::ColorType::Indexed => [p[0], p[1], p[2], 255],
            png::ColorType::Rgba => [p[0], p[1], p[2], p[3]],
        }
    };
    let mut pixels: Vec<[u8; 4]> = Vec::with_capacity(w as usize);
    let mut convert = |y: usize, data: &[u8]| {
        pixels.clear();
        pixels.extend(data.chunks_exact(step).take(w as usize).map(rgba));
        row(w, h, y, &pixels);
    };
    if interlaced {
        // The rows of an interlaced image come in seven passes: the whole frame first (within
        // the limits above).
        let size = reader.output_buffer_size().ok_or("too large to decode")?;
        let mut buffer = vec![0; size];
        let frame = reader.next_frame(&mut buffer).map_err(bad)?;
        for (y, line) in buffer[..frame.buffer_size()].chunks_exact(frame.line_size).enumerate() {
            convert(y, line);
        }
    } else {
        let mut y = 0;
        while let Some(r) = reader.next_row().map_err(bad)? {
            convert(y, r.data());
            y += 1;
        }
        if y != h as usize {
            return Err(format!("not a PNG image this program reads: {y} rows of the {h} its header says"));
        }
    }
    Ok((w, h))
}

/// Why the PNG `path` names cannot be read and decoded whole, if it cannot.
pub(crate) fn check_png(path: &str) -> Result<(), String> {
    decode_rows(&image_bytes(path)?, &mut |_, _, _, _| {}).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder of its own for a test.
    fn folder(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("fluid-core-image-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("folder");
        dir
    }

    /// A PNG's signature and header alone, of any size: what a decompression bomb begins with.
    fn header_only(w: u32, h: u32) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, w, h);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(png::BitDepth::One);
        drop(encoder.write_header().expect("header"));
        bytes
    }

    #[test]
    fn only_regular_files_are_read_and_the_message_says_what_else_it_is() {
        let dir = folder("special");
        let fifo = dir.join("pipe.png");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
        assert!(made.success());
        let link = dir.join("zero.png");
        std::os::unix::fs::symlink("/dev/zero", &link).expect("symlink");
        // A FIFO is never opened (that would wait for a writer): this returns at once.
        let cases = [(&fifo, "a FIFO"), (&link, "a device"), (&dir, "a folder")];
        for (path, what) in cases {
            let e = image_bytes(path.to_str().expect("utf8")).expect_err("refused");
            assert!(e.contains(what) && e.contains("only regular files"), "{}: {e}", path.display());
        }
        let e = image_bytes(dir.join("nope.png").to_str().expect("utf8")).expect_err("refused");
        assert_eq!(e, "no such file");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn missing_denied_and_not_a_png_read_apart() {
        use std::io::{Error, ErrorKind};
        assert_eq!(io_reason(&Error::from(ErrorKind::NotFound)), "no such file");
        assert_eq!(io_reason(&Error::from(ErrorKind::PermissionDenied)), "permission denied");
        let dir = folder("denied");
        let locked = dir.join("locked.png");
        std::fs::write(&locked, header_only(2, 2)).expect("write");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).expect("chmod");
        // A privileged user reads it anyway; anyone else is told so.
        if std::fs::read(&locked).is_err() {
            assert_eq!(image_bytes(locked.to_str().expect("utf8")).expect_err("denied"), "permission denied");
        }
        let text = dir.join("text.png");
        std::fs::write(&text, "not an image").expect("write");
        let e = check_png(text.to_str().expect("utf8")).expect_err("not a PNG");
        assert!(e.starts_with("not a PNG image"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_longer_than_the_cap_is_refused_before_it_is_read() {
        let dir = folder("long");
        let long = dir.join("huge.png");
        // Sparse: a gigabyte that takes no disk.
        std::fs::File::create(&long).and_then(|f| f.set_len(1 << 30)).expect("sparse file");
        let t0 = std::time::Instant::now();
        let e = image_bytes(long.to_str().expect("utf8")).expect_err("refused");
        assert!(e.contains("1073741824 bytes") && e.contains("16777216 (16 MiB)"), "{e}");
        assert!(t0.elapsed().as_secs_f64() < 1.0, "it read the file: {:?}", t0.elapsed());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_png_too_large_is_refused_from_its_header_before_any_pixel() {
        for (w, h) in [(20000, 20000), (MAX_IMAGE_SIDE + 1, 1), (4097, 4097)] {
            let mut rows = 0;
            let e = decode_rows(&header_only(w, h), &mut |_, _, _, _| rows += 1).expect_err("refused");
            assert!(e.contains(&format!("{w} x {h} pixels")) && e.contains("16384 along a side"), "{e}");
            assert_eq!(rows, 0);
        }
        // At the limits the header passes (and the missing pixels are what is wrong).
        let e = decode_rows(&header_only(4096, 4096), &mut |_, _, _, _| {}).expect_err("no pixels");
        assert!(!e.contains("pixels in all"), "{e}");
    }

    #[test]
    fn rows_come_from_the_top_in_order() {
        let (w, h) = (3, 5);
        let data: Vec<u8> = (0..w * h).map(|k| (k * 10) as u8).collect();
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, w, h);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.write_header().and_then(|mut wr| wr.write_image_data(&data)).expect("png");
        let mut seen = Vec::new();
        let size =
            decode_rows(&bytes, &mut |_, _, y, row| seen.push((y, row.iter().map(|p| p[0]).collect::<Vec<_>>())))
                .expect("decoded");
        assert_eq!(size, (w, h));
        let want: Vec<(usize, Vec<u8>)> = (0..h as usize).map(|y| (y, data[y * 3..y * 3 + 3].to_vec())).collect();
        assert_eq!(seen, want);
    }

    #[test]
    fn a_bare_built_in_name_is_the_built_in_image() {
        let bytes = image_bytes("grate.png").expect("built in");
        assert!(matches!(bytes, Cow::Borrowed(_)));
        assert_eq!(&*bytes, built_in("grate.png").expect("grate"));
        // Any other path is a file.
        assert_eq!(image_bytes("./grate.png-nowhere").expect_err("a file"), "no such file");
    }
}
