//! Frames written to files: PNG pictures, OpenEXR fields, flipbook atlases and GIFs.

use super::*;

/// `data` (a field of the shape `shape`, as its `FieldInfo::shape` says) as a 32-bit float
/// OpenEXR image, top row first: channel `Y`, or `R`, `G`, `B`, `A` for the dye. Written to
/// `<path>.part` and renamed once whole.
pub(crate) fn save_exr(path: &Path, shape: &[usize], data: &[f32]) -> Result<(), Failure> {
    use exr::prelude::{Image, SpecificChannels, Vec2, WritableImage};
    let (h, w) = (shape[0], shape[1]);
    let written = whole::write_whole(path, |file| {
        let out = std::io::BufWriter::new(file);
        let written = if shape.len() == 3 {
            let px = |p: Vec2<usize>| {
                let c = 4 * ((h - 1 - p.1) * w + p.0);
                (data[c], data[c + 1], data[c + 2], data[c + 3])
            };
            Image::from_channels((w, h), SpecificChannels::rgba(px)).write().to_buffered(out)
        } else {
            let px = |p: Vec2<usize>| (data[(h - 1 - p.1) * w + p.0],);
            let channels = SpecificChannels::build().with_channel("Y").with_pixel_fn(px);
            Image::from_channels((w, h), channels).write().to_buffered(out)
        };
        written.map_err(std::io::Error::other)
    });
    written.map_err(|e| io_failure(path, e))
}

/// `w × h` RGBA8 pixels, top row first, as a PNG, whole or not at all.
pub(crate) fn save_png(path: &Path, w: u32, h: u32, rgba: &[u8]) -> Result<(), Failure> {
    whole::write_whole(path, |file| {
        let mut writer = png_writer(file, w, h)?;
        writer.write_image_data(rgba).map_err(std::io::Error::other)?;
        writer.finish().map_err(std::io::Error::other)
    })
    .map_err(|e| io_failure(path, e))
}

/// A PNG encoder of `w × h` RGBA8 into `file`, its header written.
fn png_writer(
    file: &mut std::fs::File,
    w: u32,
    h: u32,
) -> std::io::Result<png::Writer<std::io::BufWriter<&mut std::fs::File>>> {
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.write_header().map_err(std::io::Error::other)
}

/// Most pixels along either side of a flipbook atlas (what game engines take as one texture).
pub(crate) const MAX_ATLAS_SIDE: u32 = 16384;

/// A flipbook's layout: `columns × rows` frames over a run of `steps` steps.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Flipbook {
    columns: u32,
    rows: u32,
    steps: u32,
}

impl Flipbook {
    /// `COLSxROWS`, e.g. `8x8`: at least one of each, no more frames than steps.
    pub(crate) fn parse(text: &str, steps: u32) -> Result<Flipbook, Failure> {
        let bad = |why: String| Failure::from(Error::invalid("--flipbook", text, why));
        let (c, r) = text.split_once(['x', 'X']).ok_or_else(|| bad("expected COLSxROWS, e.g. 8x8".into()))?;
        let parse = |s: &str| s.trim().parse::<u32>().ok().filter(|n| (1..=1024).contains(n));
        let (Some(columns), Some(rows)) = (parse(c), parse(r)) else {
            return Err(bad("columns and rows are whole numbers from 1 to 1024, e.g. 8x8".into()));
        };
        let frames = u64::from(columns) * u64::from(rows);
        if frames > u64::from(steps) {
            return Err(bad(format!("{frames} frames need at least as many steps, and the run has {steps}")));
        }
        Ok(Flipbook { columns, rows, steps })
    }

    pub(crate) fn frames(&self) -> u32 {
        self.columns * self.rows
    }

    /// An error unless the atlas of frames `frame` pixels in size fits [`MAX_ATLAS_SIDE`] both
    /// ways.
    pub(crate) fn check_size(&self, (fw, fh): (u32, u32)) -> Result<(), Failure> {
        let (w, h) = (u64::from(self.columns) * u64::from(fw), u64::from(self.rows) * u64::from(fh));
        if w > u64::from(MAX_ATLAS_SIDE) || h > u64::from(MAX_ATLAS_SIDE) {
            let why = format!(
                "the atlas would be {w} x {h} pixels, more than {MAX_ATLAS_SIDE} along a side: fewer frames or a smaller grid"
            );
            return Err(Error::invalid("--flipbook", format!("{}x{}", self.columns, self.rows), why).into());
        }
        Ok(())
    }
}

/// The frames of a flipbook as they come, written into its PNG atlas a row of tiles at a
/// time: memory holds one row of frames (`columns` of them), not the whole atlas. The file is
/// `<name>_flipbook.png.part` until [`Atlas::write`] renames it; a run that fails before then
/// removes it.
pub(crate) struct Atlas {
    book: Flipbook,
    frame: (usize, usize),
    /// The row of tiles being filled.
    row: Vec<u8>,
    taken: u32,
    path: PathBuf,
    part: PathBuf,
    /// `None` once written.
    writer: Option<png::StreamWriter<'static, std::io::BufWriter<std::fs::File>>>,
}

impl Atlas {
    /// The atlas `DIR/<name>_flipbook.png` of frames `nx × ny`, its header written.
    pub(crate) fn create(book: Flipbook, nx: u32, ny: u32, dir: &Path, name: &str) -> Result<Atlas, Failure> {
        let (w, h) = (nx as usize, ny as usize);
        let path = dir.join(format!("{name}_flipbook.png"));
        let part = whole::part_path(&path);
        let file = whole::create_new(&part).map_err(|e| io_failure(&part, e))?;
        let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), nx * book.columns, ny * book.rows);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        let writer =
            encoder.write_header().and_then(png::Writer::into_stream_writer).map_err(|e| io_failure(&part, e))?;
        let row = vec![0; 4 * w * h * book.columns as usize];
        Ok(Atlas { book, frame: (w, h), row, taken: 0, path, part, writer: Some(writer) })
    }

    /// Host bytes it holds at most: one row of tiles.
    pub(crate) fn host_bytes(book: &Flipbook, (nx, ny): (u32, u32)) -> u64 {
        4 * u64::from(nx) * u64::from(ny) * u64::from(book.columns)
    }

    /// Whether step `k` (1-based) is the next frame's: frame `f` is at step
    /// ⌊(f + 1) · steps / frames⌋, so they are evenly spread and the last is the last step.
    pub(crate) fn wants(&self, k: u32) -> bool {
        let f = u64::from(self.taken);
        f < u64::from(self.book.frames())
            && u64::from(k) == (f + 1) * u64::from(self.book.steps) / u64::from(self.book.frames())
    }

    /// Place the next frame (`nx × ny` RGBA8, top row first) in its tile; a full row of tiles
    /// goes to the file.
    pub(crate) fn push(&mut self, rgba: &[u8]) -> Result<(), Failure> {
        let (w, h) = self.frame;
        let col = (self.taken % self.book.columns) as usize;
        let stride = 4 * w * self.book.columns as usize;
        for y in 0..h {
            let dst = y * stride + 4 * col * w;
            self.row[dst..dst + 4 * w].copy_from_slice(&rgba[4 * w * y..4 * w * (y + 1)]);
        }
        self.taken += 1;
        if self.taken.is_multiple_of(self.book.columns) {
            let Some(writer) = self.writer.as_mut() else {
                return Err(io_failure(&self.part, "the atlas is already written"));
            };
            std::io::Write::write_all(writer, &self.row).map_err(|e| io_failure(&self.part, e))?;
            self.row.fill(0);
        }
        Ok(())
    }

    /// Finish `DIR/<name>_flipbook.png` and write its `.json`; the paths.
    pub(crate) fn write(mut self, dir: &Path, name: &str, dt: f32) -> Result<Vec<PathBuf>, Failure> {
        let (w, h) = self.frame;
        let (cols, rows) = (self.book.columns, self.book.rows);
        let Some(writer) = self.writer.take() else {
            return Err(io_failure(&self.part, "the atlas is already written"));
        };
        let done = writer
            .finish()
            .map_err(|e| io_failure(&self.part, e))
            .and_then(|()| std::fs::rename(&self.part, &self.path).map_err(|e| io_failure(&self.path, e)));
        if done.is_err() {
            let _ = std::fs::remove_file(&self.part);
        }
        done?;
        let seconds_per_frame = f64::from(dt) * f64::from(self.book.steps) / f64::from(self.book.frames());
        let layout = serde_json::json!({
            "image": self.path.file_name().map(|n| n.to_string_lossy().into_owned()),
            "columns": cols,
            "rows": rows,
            "frames": self.book.frames(),
            "frame_width": w,
            "frame_height": h,
            "order": "row by row from the top left",
            "fps": 1.0 / seconds_per_frame,
            "seconds_per_frame": seconds_per_frame,
        });
        let json = dir.join(format!("{name}_flipbook.json"));
        let text = serde_json::to_string_pretty(&layout).map_err(|e| io_failure(&json, e))?;
        whole::write_whole(&json, |f| std::io::Write::write_all(f, (text + "\n").as_bytes()))
            .map_err(|e| io_failure(&json, e))?;
        Ok(vec![self.path.clone(), json])
    }
}

impl Drop for Atlas {
    fn drop(&mut self) {
        if self.writer.take().is_some() {
            // Not written: the run failed. The half-written file is of no use.
            let _ = std::fs::remove_file(&self.part);
        }
    }
}

/// An animated GIF written as the frames come, looping, each frame shown until the time of the
/// next (GIF delays are whole centiseconds: each delay is rounded so that the frames' times
/// never drift from the run's; a frame is shown at least 20 ms, what browsers honour), each with its own
/// palette (what `image`'s GIF encoder wrote at speed 10, byte for byte). The quantisation is
/// most of a GIF's time, so frames wait in a batch of a few per core and each batch's palettes
/// are computed on every core, then compressed and written in order: memory holds one batch,
/// not the whole run. The file is `<path>.part` until [`GifWriter::finish`] renames it; a run
/// that fails before then removes it.
pub(crate) struct GifWriter {
    path: PathBuf,
    part: PathBuf,
    size: (u16, u16),
    /// `None` once finished.
    enc: Option<gif::Encoder<std::io::BufWriter<std::fs::File>>>,
    /// Frames not yet written, with their times (seconds).
    batch: Vec<(Vec<u8>, f64)>,
    /// The first frame's time, and the centiseconds of delay written so far.
    start: Option<f64>,
    written_cs: u64,
    /// The last delay written, for the last frame (which has no next).
    last_delay: u16,
    workers: usize,
}

impl GifWriter {
    pub(crate) fn create(path: &Path, w: u32, h: u32) -> Result<GifWriter, Failure> {
        let (Ok(gw), Ok(gh)) = (u16::try_from(w), u16::try_from(h)) else {
            return Err(io_failure(path, format!("a GIF is at most 65535 pixels wide and high, not {w} x {h}")));
        };
        let part = whole::part_path(path);
        let file = whole::create_new(&part).map_err(|e| io_failure(&part, e))?;
        let mut enc =
            gif::Encoder::new(std::io::BufWriter::new(file), gw, gh, &[]).map_err(|e| io_failure(&part, e))?;
        enc.set_repeat(gif::Repeat::Infinite).map_err(|e| io_failure(&part, e))?;
        let workers = Self::workers();
        Ok(GifWriter {
            path: path.to_path_buf(),
            part,
            size: (gw, gh),
            enc: Some(enc),
            batch: Vec::new(),
            start: None,
            written_cs: 0,
            last_delay: 4,
            workers,
        })
    }

    /// Threads that quantise a batch.
    fn workers() -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }

    /// Frames a batch holds at most (what a GIF holds in host memory besides its file).
    pub(crate) fn batch_frames() -> usize {
        4 * Self::workers()
    }

    /// Add a frame (`w × h` RGBA8, top row first) at time `at` (seconds: the simulated time of
    /// a run's frame, the wall clock's of a viewer's), no earlier than the frame before.
    pub(crate) fn push(&mut self, rgba: Vec<u8>, at: f64) -> Result<(), Failure> {
        let (w, h) = (usize::from(self.size.0), usize::from(self.size.1));
        if rgba.len() != 4 * w * h {
            return Err(io_failure(&self.path, format!("a frame of {} bytes is not {w} x {h} RGBA", rgba.len())));
        }
        if !at.is_finite() || self.batch.last().is_some_and(|(_, t)| at < *t) {
            return Err(io_failure(&self.path, format!("a frame at {at} s comes before the frame before it")));
        }
        self.batch.push((rgba, at));
        if self.batch.len() >= Self::batch_frames() { self.write_batch(false) } else { Ok(()) }
    }

    /// The delay of each frame but the batch's last (all of them when `last`, the final one
    /// shown as long as the one before): until the next frame's time, in whole centiseconds
    /// that keep the total on the frames' clock, at least 2.
    fn delays(&mut self, last: bool) -> Vec<u16> {
        let start = *self.start.get_or_insert(self.batch.first().map_or(0.0, |f| f.1));
        let n = if last { self.batch.len() } else { self.batch.len().saturating_sub(1) };
        let mut delays = Vec::with_capacity(n);
        for i in 0..n {
            let delay = match self.batch.get(i + 1) {
                Some((_, next)) => {
                    let due = ((next - start) * 100.0).round().max(0.0) as u64;
                    due.saturating_sub(self.written_cs).clamp(2, u64::from(u16::MAX)) as u16
                }
                None => self.last_delay,
            };
            self.written_cs += u64::from(delay);
            self.last_delay = delay;
            delays.push(delay);
        }
        delays
    }

    /// Quantise and write the frames whose delays are known (all of them when `last`).
    fn write_batch(&mut self, last: bool) -> Result<(), Failure> {
        let (gw, gh) = self.size;
        let delays = self.delays(last);
        let quantise = |(rgba, delay): (&(Vec<u8>, f64), &u16)| {
            let mut frame = gif::Frame::from_rgba_speed(gw, gh, &mut rgba.0.clone(), 10);
            frame.delay = *delay;
            frame.dispose = gif::DisposalMethod::Background;
            frame
        };
        let ready: Vec<_> = self.batch.iter().zip(&delays).collect();
        let per = ready.len().div_ceil(self.workers).max(1);
        let quantised: Vec<gif::Frame<'static>> = std::thread::scope(|s| {
            let jobs: Vec<_> = ready
                .chunks(per)
                .map(|chunk| s.spawn(move || chunk.iter().copied().map(quantise).collect::<Vec<_>>()))
                .collect();
            jobs.into_iter().flat_map(|j| j.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
        });
        let Some(enc) = self.enc.as_mut() else {
            return Err(io_failure(&self.part, "the GIF is already finished"));
        };
        for frame in &quantised {
            enc.write_frame(frame).map_err(|e| io_failure(&self.part, e))?;
        }
        self.batch.drain(..delays.len());
        Ok(())
    }

    /// Write what is left and the trailer, flush, and give the file its name.
    pub(crate) fn finish(mut self) -> Result<(), Failure> {
        self.write_batch(true)?;
        let Some(enc) = self.enc.take() else {
            return Err(io_failure(&self.part, "the GIF is already finished"));
        };
        // Write the trailer and flush here, so that a failure is reported rather than dropped
        // (a full disk shows here, when the buffer is written); a failure removes the file.
        let done = enc.into_inner().map_err(|e| io_failure(&self.part, e)).and_then(|mut out| {
            std::io::Write::flush(&mut out).map_err(|e| io_failure(&self.part, e))?;
            drop(out);
            std::fs::rename(&self.part, &self.path).map_err(|e| io_failure(&self.path, e))
        });
        if done.is_err() {
            let _ = std::fs::remove_file(&self.part);
        }
        done
    }
}

impl Drop for GifWriter {
    fn drop(&mut self) {
        if self.enc.take().is_some() {
            // Not finished: the run failed. The half-written file is of no use.
            let _ = std::fs::remove_file(&self.part);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames 1/30 s apart, more than a batch of them, play at the run's pace: delays of 3 and
    /// 4 centiseconds whose sums stay within half a centisecond of the frames' times; frames
    /// closer than 20 ms apart are shown 20 ms; a frame before the one before is refused.
    #[test]
    fn a_gif_plays_at_the_pace_of_its_frames() {
        let dir = std::env::temp_dir().join(format!("fluid-gif-pace-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("folder");
        let path = dir.join("pace.gif");
        let mut gif = GifWriter::create(&path, 4, 2).map_err(|e| e.message).expect("create");
        let n = 3 * GifWriter::batch_frames() + 1;
        for k in 0..n {
            gif.push(vec![(k * 7 % 256) as u8; 4 * 4 * 2], 10.0 + k as f64 / 30.0)
                .map_err(|e| e.message)
                .expect("frame");
        }
        let e = gif.push(vec![0; 32], 0.0).expect_err("a frame back in time");
        assert!(e.message.contains("comes before"), "{}", e.message);
        gif.finish().map_err(|e| e.message).expect("finish");
        let mut options = gif::DecodeOptions::new();
        options.set_color_output(gif::ColorOutput::RGBA);
        let mut decoder = options.read_info(std::fs::File::open(&path).expect("open")).expect("a GIF");
        let mut delays = Vec::new();
        while let Some(frame) = decoder.read_next_frame().expect("frame") {
            delays.push(frame.delay);
        }
        assert_eq!(delays.len(), n);
        let mut total = 0.0;
        for (k, d) in delays.iter().enumerate().take(n - 1) {
            assert!(*d == 3 || *d == 4, "frame {k}: {d} cs");
            total += f64::from(*d);
            assert!((total - 100.0 * (k + 1) as f64 / 30.0).abs() <= 0.5, "after frame {k}: {total} cs");
        }
        let mut fast = GifWriter::create(&dir.join("fast.gif"), 4, 2).map_err(|e| e.message).expect("create");
        for k in 0..3 {
            fast.push(vec![0; 32], f64::from(k) * 0.005).map_err(|e| e.message).expect("frame");
        }
        assert_eq!(fast.delays(true), [2, 2, 2]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A GIF that cannot be finished leaves no `.part` file: here its name is taken by a
    /// folder, so the last step, the rename, fails.
    #[test]
    fn a_gif_that_fails_to_finish_leaves_nothing() {
        let dir = std::env::temp_dir().join(format!("fluid-gif-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("taken.gif");
        std::fs::create_dir_all(path.join("inside")).expect("a folder where the GIF goes");
        let mut gif = GifWriter::create(&path, 4, 2).map_err(|e| e.message).expect("create");
        gif.push(vec![128; 4 * 4 * 2], 0.0).map_err(|e| e.message).expect("frame");
        let part = gif.part.clone();
        assert!(part.exists());
        let Err(e) = gif.finish() else { panic!("finished a GIF whose name is a folder") };
        assert!(e.message.contains("taken.gif"), "{}", e.message);
        assert!(!part.exists(), "{} left behind", part.display());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
