//! Reads that come back later: what a GPU backend copies for a queued read ([`ReadPlan`], a few
//! values as [`Gather`] runs), the handle the caller holds ([`PendingRead`]), and the
//! bookkeeping of the reads on a device ([`ReadQueue`]), written once for every backend.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use crate::bytes::{f32s_le, values_le};
use crate::error::{Error, Result};
use crate::resource::{Format, ResourceDesc, ResourceId};

/// A read queued by [`crate::backend::Backend::queue_download_at`] or [`crate::backend::Backend::queue_download`], to hand to
/// the same backend's [`crate::backend::Backend::poll_download`] or [`crate::backend::Backend::wait_download`].
#[derive(Debug)]
pub struct PendingRead {
    id: u64,
    by: &'static str,
    state: ReadState,
    /// The backend holds a [`Weak`] of it ([`ReadHandle`]), so it can tell a read dropped
    /// unread and free what it holds.
    alive: Arc<()>,
}

#[derive(Debug)]
enum ReadState {
    /// Read already (a backend without a device, or nothing to read).
    Ready(Vec<f32>),
    /// On the device: the backend has it under [`PendingRead::id`].
    Queued,
    /// Handed over.
    Taken,
}

/// What a backend keeps of a [`PendingRead`] it queued: its id, and whether the caller still
/// holds it.
#[derive(Debug)]
pub struct ReadHandle {
    /// [`PendingRead::id`].
    pub id: u64,
    alive: Weak<()>,
}

impl ReadHandle {
    /// Whether the [`PendingRead`] was dropped (its values can no longer be asked for).
    pub fn dropped(&self) -> bool {
        self.alive.strong_count() == 0
    }
}

/// What a GPU backend's queued read copies and how the copied values become the ones asked
/// for: a whole field, or the values at some indices (their [`Gather`] runs, or the whole field
/// to pick from where that is cheaper).
#[derive(Clone, Debug, PartialEq)]
pub struct ReadPlan {
    resource: ResourceId,
    name: &'static str,
    /// 32-bit words of the whole resource.
    len: usize,
    format: Format,
    /// Its values (of `f32` or `f16`).
    scalars: usize,
    /// `None` for the whole field.
    indices: Option<Vec<usize>>,
    gather: Option<Gather>,
}

impl ReadPlan {
    /// Every value of resource `resource` (described by `desc`).
    pub fn whole(resource: ResourceId, desc: &ResourceDesc) -> ReadPlan {
        let (len, scalars) = (desc.words() as usize, desc.scalars() as usize);
        ReadPlan { resource, name: desc.name, len, format: desc.format, scalars, indices: None, gather: None }
    }

    /// The values of resource `resource` (described by `desc`) at `indices`; one past the
    /// resource is an error naming it.
    pub fn at(resource: ResourceId, desc: &ResourceDesc, indices: &[usize]) -> Result<ReadPlan> {
        let (len, scalars) = (desc.words() as usize, desc.scalars() as usize);
        // Half values share words: those read the whole field and pick from it.
        let gather = if desc.format.is_half() {
            check_indices(desc.name, scalars, indices)?;
            None
        } else {
            Gather::plan(desc.name, len, indices)?
        };
        let format = desc.format;
        Ok(ReadPlan { resource, name: desc.name, len, format, scalars, indices: Some(indices.to_vec()), gather })
    }

    /// The resource read.
    pub fn resource(&self) -> ResourceId {
        self.resource
    }

    /// `(first value, count)` of each run to copy, packed one after another from the start
    /// of the read-back buffer.
    pub fn runs(&self) -> Vec<(usize, usize)> {
        match &self.gather {
            Some(g) => g.runs.clone(),
            None => vec![(0, self.len)],
        }
    }

    /// Bytes the runs fill.
    pub fn bytes(&self) -> u64 {
        4 * self.gather.as_ref().map_or(self.len, |g| g.unique.len()) as u64
    }

    /// The values of the bytes the runs copied (`f16` widened to `f32`).
    pub fn decode(&self, bytes: &[u8]) -> Vec<f32> {
        if self.gather.is_some() { f32s_le(bytes) } else { values_le(self.format, self.scalars, bytes) }
    }

    /// The values asked for, from those the runs copied (in their order, [`ReadPlan::decode`]d).
    pub fn finish(&self, fetched: Vec<f32>) -> Result<Vec<f32>> {
        match (&self.indices, &self.gather) {
            (None, _) => Ok(fetched),
            (Some(indices), Some(g)) => Ok(g.scatter(indices, &fetched)),
            (Some(indices), None) => pick(self.name, &fetched, indices),
        }
    }
}

/// Ids unique in the process, so a read handed to another backend than its own is an error
/// rather than another read's values.
static NEXT_READ: AtomicU64 = AtomicU64::new(1);

impl PendingRead {
    fn new(by: &'static str, state: ReadState) -> PendingRead {
        PendingRead { id: NEXT_READ.fetch_add(1, Ordering::Relaxed), by, state, alive: Arc::new(()) }
    }

    /// A read whose values are there already (backend `by`'s).
    pub fn ready(by: &'static str, values: Vec<f32>) -> PendingRead {
        PendingRead::new(by, ReadState::Ready(values))
    }

    /// A read backend `by` queued on its device, and the handle it keeps of it.
    pub fn queued(by: &'static str) -> (PendingRead, ReadHandle) {
        let read = PendingRead::new(by, ReadState::Queued);
        let handle = ReadHandle { id: read.id, alive: Arc::downgrade(&read.alive) };
        (read, handle)
    }

    /// Its id, unique in the process.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The backend that queued it.
    pub fn backend(&self) -> &'static str {
        self.by
    }

    /// Whether its values were handed over.
    pub fn is_taken(&self) -> bool {
        matches!(self.state, ReadState::Taken)
    }

    /// For backend `by`'s [`crate::backend::Backend::poll_download`]: the values of a ready read (which is
    /// then taken), `None` for one on the device; an error for one taken already or queued by
    /// another kind of backend.
    pub fn take_ready(&mut self, by: &str) -> Result<Option<Vec<f32>>> {
        if self.by != by {
            return Err(Error::invalid("read", self.id, format!("it was queued on the {} backend, not {by}", self.by)));
        }
        match std::mem::replace(&mut self.state, ReadState::Taken) {
            ReadState::Ready(values) => Ok(Some(values)),
            ReadState::Queued => {
                self.state = ReadState::Queued;
                Ok(None)
            }
            ReadState::Taken => Err(Error::invalid("read", self.id, "its values were handed over already")),
        }
    }

    /// For a backend that has handed a queued read's values over.
    pub fn set_taken(&mut self) {
        self.state = ReadState::Taken;
    }

    /// The error for a queued read the backend `by` does not hold (another backend's of the
    /// same kind).
    pub fn unknown(&self, by: &str) -> Error {
        Error::invalid("read", self.id, format!("this {by} backend queued no such read (another one did)"))
    }
}

/// The values of `data` (resource `name`'s) at `indices`, in that order; an index past the
/// end is an error naming it.
pub fn pick(name: &str, data: &[f32], indices: &[usize]) -> Result<Vec<f32>> {
    check_indices(name, data.len(), indices)?;
    Ok(indices.iter().map(|&k| data[k]).collect())
}

/// An error naming the first index of `indices` past resource `name` of `len` values, if any.
pub fn check_indices(name: &str, len: usize, indices: &[usize]) -> Result<()> {
    match indices.iter().find(|&&k| k >= len) {
        Some(&k) => Err(Error::invalid(format!("{name}[{k}]"), k, format!("the field has {len} values"))),
        None => Ok(()),
    }
}

/// The reads a GPU backend has queued on its device and nobody has taken yet, each with what
/// the backend keeps for it (`S`: its read-back buffer, its fence) and its [`ReadPlan`]: the
/// bookkeeping of [`crate::backend::Backend::queue_download_at`], `poll_download` and `wait_download`,
/// written once. A read whose [`PendingRead`] was dropped stays until its copy is done, then a
/// sweep frees it.
#[derive(Debug)]
pub struct ReadQueue<S> {
    by: &'static str,
    reads: Vec<(ReadHandle, S, ReadPlan)>,
}

impl<S> ReadQueue<S> {
    /// An empty queue of backend `by`'s.
    pub fn new(by: &'static str) -> ReadQueue<S> {
        ReadQueue { by, reads: Vec::new() }
    }

    /// A read just submitted, with what the backend keeps for it; the caller's handle.
    pub fn push(&mut self, slot: S, plan: ReadPlan) -> PendingRead {
        let (read, handle) = PendingRead::queued(self.by);
        self.reads.push((handle, slot, plan));
        read
    }

    /// Reads not taken yet (those dropped and not yet swept included).
    pub fn len(&self) -> usize {
        self.reads.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.reads.is_empty()
    }

    /// What the backend keeps for each read.
    pub fn slots(&self) -> impl Iterator<Item = &S> {
        self.reads.iter().map(|r| &r.1)
    }

    /// Free the reads whose [`PendingRead`] was dropped and that `done` says are finished,
    /// handing what the backend kept for each to `release`.
    pub fn sweep(&mut self, mut done: impl FnMut(&S) -> Result<bool>, mut release: impl FnMut(S)) -> Result<()> {
        let mut k = 0;
        while k < self.reads.len() {
            if self.reads[k].0.dropped() && done(&self.reads[k].1)? {
                release(self.reads.remove(k).1);
            } else {
                k += 1;
            }
        }
        Ok(())
    }

    /// The values of `read` once `done` says its copy is finished (`finish` turns what the
    /// backend kept into them and frees it), `None` before; a read that is ready already (no
    /// device), taken already or another backend's is answered as
    /// [`PendingRead::take_ready`] says.
    pub fn poll(
        &mut self,
        read: &mut PendingRead,
        done: impl FnOnce(&S) -> Result<bool>,
        finish: impl FnOnce(S, &ReadPlan) -> Result<Vec<f32>>,
    ) -> Result<Option<Vec<f32>>> {
        if let Some(values) = read.take_ready(self.by)? {
            return Ok(Some(values));
        }
        let k = self.position(read)?;
        if !done(&self.reads[k].1)? {
            return Ok(None);
        }
        read.set_taken();
        let (_, slot, plan) = self.reads.remove(k);
        finish(slot, &plan).map(Some)
    }

    /// The values of `read`, after `wait` has waited for its copy.
    pub fn wait(
        &mut self,
        mut read: PendingRead,
        wait: impl FnOnce(&S) -> Result<()>,
        finish: impl FnOnce(S, &ReadPlan) -> Result<Vec<f32>>,
    ) -> Result<Vec<f32>> {
        if let Some(values) = read.take_ready(self.by)? {
            return Ok(values);
        }
        let k = self.position(&read)?;
        wait(&self.reads[k].1)?;
        read.set_taken();
        let (_, slot, plan) = self.reads.remove(k);
        finish(slot, &plan)
    }

    /// Every read, removed (for a backend being dropped).
    pub fn drain(&mut self) -> Vec<S> {
        self.reads.drain(..).map(|r| r.1).collect()
    }

    fn position(&self, read: &PendingRead) -> Result<usize> {
        self.reads.iter().position(|r| r.0.id == read.id()).ok_or_else(|| read.unknown(self.by))
    }
}

/// The values a [`crate::backend::Backend::download_at`] call names, as a GPU backend copies them: each
/// distinct index once, in runs of consecutive indices (one copy region each).
#[derive(Clone, Debug, PartialEq)]
pub struct Gather {
    /// The distinct indices, ascending.
    pub unique: Vec<usize>,
    /// `(first index, count)` of each run of consecutive indices of `unique`, in order; their
    /// counts add up to `unique.len()`.
    pub runs: Vec<(usize, usize)>,
}

impl Gather {
    /// Copy regions past this many read the whole field instead.
    pub const MAX_RUNS: usize = 1024;

    /// Reads of up to this many bytes (16,384 values: a game's samples every frame) go
    /// through one staging buffer a GPU backend keeps, made at the first such read; larger
    /// ones through a buffer of their own.
    pub const KEPT_BYTES: u64 = 64 * 1024;

    /// The runs of `indices`.
    pub fn new(indices: &[usize]) -> Gather {
        let mut unique = indices.to_vec();
        unique.sort_unstable();
        unique.dedup();
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for &k in &unique {
            match runs.last_mut() {
                Some((start, n)) if *start + *n == k => *n += 1,
                _ => runs.push((k, 1)),
            }
        }
        Gather { unique, runs }
    }

    /// How a GPU backend should read `indices` of resource `name`, of `len` values: `Some`
    /// runs to copy, or `None` where reading the whole field is cheaper ([`Gather::worth_it`]);
    /// an index past the field is an error naming it ([`check_indices`]).
    pub fn plan(name: &str, len: usize, indices: &[usize]) -> Result<Option<Gather>> {
        check_indices(name, len, indices)?;
        let gather = Gather::new(indices);
        Ok(gather.worth_it(len).then_some(gather))
    }

    /// Whether copying the runs beats reading a whole field of `len` values: at most
    /// [`Gather::MAX_RUNS`] regions, and less than half the field.
    pub fn worth_it(&self, len: usize) -> bool {
        self.runs.len() <= Gather::MAX_RUNS && 2 * self.unique.len() < len
    }

    /// The values at `indices` (those [`Gather::new`] was given), from `fetched`, the values
    /// of [`Gather::unique`] in its order.
    pub fn scatter(&self, indices: &[usize], fetched: &[f32]) -> Vec<f32> {
        indices.iter().map(|k| self.unique.binary_search(k).map_or(f32::NAN, |at| fetched[at])).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::{Format, Lifetime, Shape};

    #[test]
    fn gathers_dedup_sort_and_run_their_indices() {
        let indices = [7, 3, 4, 9, 4, 8, 20, 3];
        let g = Gather::new(&indices);
        assert_eq!(g.unique, vec![3, 4, 7, 8, 9, 20]);
        assert_eq!(g.runs, vec![(3, 2), (7, 3), (20, 1)]);
        // Values of the unique indices (index · 10) back in the asked order.
        let fetched: Vec<f32> = g.unique.iter().map(|&k| k as f32 * 10.0).collect();
        assert_eq!(g.scatter(&indices, &fetched), indices.iter().map(|&k| k as f32 * 10.0).collect::<Vec<_>>());
        assert!(g.worth_it(13) && !g.worth_it(12));
        let many: Vec<usize> = (0..2 * (Gather::MAX_RUNS + 1)).step_by(2).collect();
        assert!(!Gather::new(&many).worth_it(1 << 30));
        assert!(Gather::new(&many[1..]).worth_it(1 << 30));
        // The plan: the runs where they are worth it, else none; past the field an error.
        assert_eq!(Gather::plan("density", 21, &indices).expect("in range"), Some(g));
        assert_eq!(Gather::plan("density", 7, &[2, 0, 1]).expect("in range").map(|g| g.runs), Some(vec![(0, 3)]));
        assert_eq!(Gather::plan("density", 6, &[2, 0, 1]).expect("in range"), None);
        let e = Gather::plan("density", 20, &indices).expect_err("index 20").to_string();
        assert!(e.contains("density[20]"), "{e}");
    }

    #[test]
    fn pending_reads_hand_their_values_over_once_to_their_own_kind_of_backend() {
        let mut ready = PendingRead::ready("cpu", vec![1.0, 2.0]);
        let e = ready.take_ready("wgpu").expect_err("another backend").to_string();
        assert!(e.contains("queued on the cpu backend, not wgpu"), "{e}");
        assert!(!ready.is_taken());
        assert_eq!(ready.take_ready("cpu").expect("ready"), Some(vec![1.0, 2.0]));
        assert!(ready.is_taken());
        let e = ready.take_ready("cpu").expect_err("taken").to_string();
        assert!(e.contains("handed over already") && e.contains(&ready.id().to_string()), "{e}");
        // Queued: not there, until the backend says so; its handle sees it dropped.
        let (mut queued, handle) = PendingRead::queued("vulkan");
        assert_eq!((handle.id, handle.dropped()), (queued.id(), false));
        assert_ne!(queued.id(), ready.id());
        assert_eq!(queued.take_ready("vulkan").expect("queued"), None);
        assert!(!queued.is_taken());
        queued.set_taken();
        assert!(queued.take_ready("vulkan").is_err());
        drop(queued);
        assert!(handle.dropped());
    }

    #[test]
    fn read_plans_copy_runs_or_the_whole_field_and_hand_back_what_was_asked() {
        let r = ResourceId(3);
        let cells = |len| ResourceDesc::new("density", Shape::Cells, Format::F32, Lifetime::State, len);
        let whole = ReadPlan::whole(r, &cells(5));
        assert_eq!((whole.runs(), whole.bytes()), (vec![(0, 5)], 20));
        assert_eq!(whole.finish(vec![1.0, 2.0, 3.0, 4.0, 5.0]).expect("whole"), vec![1.0, 2.0, 3.0, 4.0, 5.0]);
        // A few of many values: their runs, scattered back in the asked order.
        let few = ReadPlan::at(r, &cells(100), &[7, 3, 4, 7]).expect("in range");
        assert_eq!((few.runs(), few.bytes()), (vec![(3, 2), (7, 1)], 12));
        assert_eq!(few.finish(vec![30.0, 40.0, 70.0]).expect("few"), vec![70.0, 30.0, 40.0, 70.0]);
        // Most of the field: read whole and picked from.
        let most = ReadPlan::at(r, &cells(4), &[3, 0, 1]).expect("in range");
        assert_eq!((most.runs(), most.bytes()), (vec![(0, 4)], 16));
        assert_eq!(most.finish(vec![0.5, 1.5, 2.5, 3.5]).expect("most"), vec![3.5, 0.5, 1.5]);
        let u = ResourceDesc::new("u", Shape::XFaces, Format::F32, Lifetime::State, 4);
        let e = ReadPlan::at(r, &u, &[4]).expect_err("past the field").to_string();
        assert!(e.contains("u[4]"), "{e}");
    }

    #[test]
    fn little_endian_bytes_read_as_floats() {
        let values = [1.5f32, -0.0, f32::MAX, 3.25e-39];
        let mut bytes: Vec<u8> = values.iter().flat_map(|x| x.to_le_bytes()).collect();
        bytes.push(0xff);
        let read = f32s_le(&bytes[..]);
        assert_eq!(read.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), values.map(f32::to_bits));
        // Not aligned to four bytes.
        assert_eq!(f32s_le(&bytes[1..]).len(), 4);
        assert_eq!(f32s_le(&bytes[1..5])[0].to_bits(), u32::from_le_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]));
    }

    #[test]
    fn picks_past_the_field_are_errors_naming_the_index() {
        let data = [1.0, 2.0, 3.0];
        assert_eq!(pick("density", &data, &[2, 0, 2]).expect("in range"), vec![3.0, 1.0, 3.0]);
        let e = pick("density", &data, &[1, 3]).expect_err("past the end").to_string();
        assert!(e.contains("density[3]") && e.contains("3 values"), "{e}");
    }
}
