//! Checkpoints: a running simulation saved to a file and restored, on any backend.
//!
//! The file (version [`VERSION`]) is, in order:
//!
//! | bytes | what |
//! |---|---|
//! | 8 | [`MAGIC`], `FLUIDCKP` |
//! | 4 | the version, `u32` little-endian |
//! | 4 | the header's length in bytes, `u32` little-endian (at most [`MAX_HEADER`]) |
//! | header | TOML: the model family, time, step count, last `dt`, the backend that saved it, the state resources (name, format, elements, bytes) and the whole scene |
//! | payload | each state resource's bytes in the header's order, little-endian |
//! | 8 | XXH3-64 of every byte before it, `u64` little-endian |
//!
//! Only resources of [`Lifetime::State`] are saved; the scratch a step overwrites is not. A
//! checkpoint restored on the CPU backend and stepped on gives the bits the run would have had
//! without stopping; on another backend it continues within that backend's parity tolerance.

use std::io::{Read, Write};

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::Xxh3;

use crate::scene::Scene;
use swirly_ir::backend::Backend;
use swirly_ir::resource::{Lifetime, ResourceDesc, ResourceId};
use swirly_ir::{Error, Result};

/// The first bytes of every checkpoint.
pub const MAGIC: &[u8; 8] = b"FLUIDCKP";
/// The version this build writes and reads (2: each obstacle's entry in the table has four
/// header rows, the fourth its held temperature).
pub const VERSION: u32 = 2;
/// The longest header read (a scene is a few kilobytes; this bounds what a damaged length asks for).
pub const MAX_HEADER: u32 = 16 << 20;

/// The most steps a checkpoint may say were taken: 2^53, 285 years at a microsecond a step
/// (more is a damaged or edited file).
pub const MAX_STEPS: u64 = 1 << 53;

/// One saved resource, as the header lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stored {
    /// The resource's name.
    pub name: String,
    /// Its element format, as [`swirly_ir::Format`] names it (`F32`, `Vec4F32`, …).
    pub format: String,
    /// Its elements.
    pub elements: u64,
    /// Its bytes in the payload.
    pub bytes: u64,
}

/// What a checkpoint says about the state it holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// The model family (`grid`).
    pub model: String,
    /// Simulated seconds.
    pub time: f32,
    /// Steps taken (at most [`MAX_STEPS`]).
    pub steps: u64,
    /// The last step's `dt` (what passes that are not steps use).
    pub last_dt: f32,
    /// The backend that saved it (information only: any backend restores it).
    pub saved_by: String,
    /// Splats queued for the next step.
    #[serde(default)]
    pub queued: Vec<crate::splat::Splat>,
    /// The state resources, in payload order.
    pub resources: Vec<Stored>,
    /// The scene running when it was saved.
    pub scene: Scene,
}

fn bad(problem: impl Into<String>) -> Error {
    Error::Checkpoint { problem: problem.into() }
}

/// The state resources of `resources` (non-empty ones of [`Lifetime::State`]), by id.
pub(crate) fn state_resources(resources: &[ResourceDesc]) -> Vec<(ResourceId, &ResourceDesc)> {
    (resources.iter().enumerate())
        .filter(|(_, r)| r.lifetime == Lifetime::State && !r.is_empty())
        .map(|(i, r)| (ResourceId(i as u32), r))
        .collect()
}

/// The header's entry for a resource.
pub fn stored(r: &ResourceDesc) -> Stored {
    Stored { name: r.name.to_string(), format: format!("{:?}", r.format), elements: r.len, bytes: r.bytes() }
}

/// A writer that hashes what passes through it.
struct Hashing<W> {
    inner: W,
    hash: Xxh3,
}

impl<W: Write> Hashing<W> {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.hash.update(bytes);
        self.inner.write_all(bytes).map_err(|e| bad(format!("cannot write: {e}")))
    }
}

/// Write a checkpoint of `header` and the state resources it lists (of the model's
/// `resources`) from `backend`, each read and written in turn (one resource's copy in host
/// memory at a time).
pub fn write(w: &mut dyn Write, header: &Header, resources: &[ResourceDesc], backend: &mut dyn Backend) -> Result<()> {
    let text = toml::to_string(header).map_err(|e| bad(format!("cannot encode the header: {e}")))?;
    let len = u32::try_from(text.len()).ok().filter(|n| *n <= MAX_HEADER).ok_or_else(|| {
        bad(format!("the header takes {} bytes, more than the {MAX_HEADER} a checkpoint may hold", text.len()))
    })?;
    let mut out = Hashing { inner: w, hash: Xxh3::new() };
    out.put(MAGIC)?;
    out.put(&VERSION.to_le_bytes())?;
    out.put(&len.to_le_bytes())?;
    out.put(text.as_bytes())?;
    let ids = state_resources(resources);
    for s in &header.resources {
        let Some((id, _)) = ids.iter().find(|(_, r)| r.name == s.name) else {
            return Err(bad(format!("the backend holds no state resource `{}`", s.name)));
        };
        let words = backend.read(*id)?;
        let mut bytes = Vec::with_capacity(4 * words.len());
        bytes.extend(words.iter().flat_map(|w| w.to_le_bytes()));
        out.put(&bytes[..s.bytes as usize])?;
    }
    let sum = out.hash.digest();
    out.inner.write_all(&sum.to_le_bytes()).map_err(|e| bad(format!("cannot write: {e}")))?;
    out.inner.flush().map_err(|e| bad(format!("cannot write: {e}")))
}

/// A reader that hashes what passes through it.
pub struct Reader<R> {
    inner: R,
    hash: Xxh3,
    read: u64,
}

impl<R: Read> Reader<R> {
    fn take(&mut self, n: usize, what: &str) -> Result<Vec<u8>> {
        let mut buf = Vec::new();
        (&mut self.inner).take(n as u64).read_to_end(&mut buf).map_err(|e| bad(format!("cannot read {what}: {e}")))?;
        if buf.len() < n {
            return Err(bad(format!(
                "the file ends {} bytes into {what}, which takes {n} (at byte {}): it is truncated",
                buf.len(),
                self.read + buf.len() as u64
            )));
        }
        self.hash.update(&buf);
        self.read += n as u64;
        Ok(buf)
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The bytes of the next resource in the payload.
    pub fn resource(&mut self, s: &Stored) -> Result<Vec<u8>> {
        let n = usize::try_from(s.bytes).map_err(|_| bad(format!("`{}` is too large for this machine", s.name)))?;
        self.take(n, &format!("resource `{}`", s.name))
    }

    /// Check the checksum and that nothing follows it.
    pub fn finish(mut self) -> Result<()> {
        let sum = self.hash.digest();
        let mut b = [0u8; 8];
        self.inner.read_exact(&mut b).map_err(|_| bad("the file ends before its checksum: it is truncated"))?;
        if u64::from_le_bytes(b) != sum {
            return Err(bad("the checksum does not match the contents: the file is damaged"));
        }
        let mut rest = [0u8; 1];
        match self.inner.read(&mut rest) {
            Ok(0) => Ok(()),
            Ok(_) => Err(bad("bytes follow the checksum: the file is damaged or not one checkpoint")),
            Err(e) => Err(bad(format!("cannot read: {e}"))),
        }
    }
}

/// Read a checkpoint's header, leaving the reader at its payload.
pub fn read_header<R: Read>(r: R) -> Result<(Header, Reader<R>)> {
    let mut r = Reader { inner: r, hash: Xxh3::new(), read: 0 };
    let magic = r.take(8, "the file's first bytes")?;
    if magic != MAGIC {
        return Err(bad("not a checkpoint: it does not begin with `FLUIDCKP`"));
    }
    let version = r.u32("the version")?;
    if version != VERSION {
        let why = if version > VERSION { "newer than this build reads" } else { "not one this build reads" };
        return Err(bad(format!("version {version} is {why} (version {VERSION})")));
    }
    let len = r.u32("the header's length")?;
    if len > MAX_HEADER {
        return Err(bad(format!(
            "a header of {len} bytes is longer than the {MAX_HEADER} allowed: the file is damaged"
        )));
    }
    let text = r.take(len as usize, "the header")?;
    let text = std::str::from_utf8(&text).map_err(|_| bad("the header is not UTF-8: the file is damaged"))?;
    let header: Header = toml::from_str(text)
        .map_err(|e| bad(format!("the header: {}", swirly_ir::error::shorten_lines(&e.to_string()))))?;
    check_values(&header)?;
    Ok((header, r))
}

/// An error unless the header's time, step count and last `dt` are values a run reaches: a
/// finite time of at least 0, at most [`MAX_STEPS`] steps, a finite `dt` above 0 (a checksum
/// that matches says only that the file is as written, not that what wrote it was sound).
fn check_values(header: &Header) -> Result<()> {
    let damaged = "the file is damaged or was edited";
    if !(header.time.is_finite() && header.time >= 0.0) {
        return Err(bad(format!(
            "its header's `time` is {:?}: simulated seconds are finite and at least 0; {damaged}",
            header.time
        )));
    }
    if header.steps > MAX_STEPS {
        return Err(bad(format!(
            "its header's `steps` is {}, more than the {MAX_STEPS} (2^53) a run can take; {damaged}",
            header.steps
        )));
    }
    if !(header.last_dt.is_finite() && header.last_dt > 0.0) {
        return Err(bad(format!(
            "its header's `last_dt` is {:?}: a time step is finite and above 0; {damaged}",
            header.last_dt
        )));
    }
    Ok(())
}

/// An error unless the resources `header` lists are exactly the state resources the model of
/// its scene declares (`declared`): same names, formats, lengths and order.
pub(crate) fn check_matches(header: &Header, declared: &[ResourceDesc]) -> Result<()> {
    let want: Vec<Stored> = state_resources(declared).into_iter().map(|(_, r)| stored(r)).collect();
    if header.resources != want {
        let names =
            |v: &[Stored]| v.iter().map(|s| format!("{} ({} × {})", s.name, s.elements, s.format)).collect::<Vec<_>>();
        return Err(bad(format!("it holds {:?}, and its scene declares {:?}", names(&header.resources), names(&want))));
    }
    Ok(())
}
