//! The recorder's state: per-test buckets of hits and edges, the code-object cache, the
//! probes' guard list, and which bucket a hit goes to. Only touched with the GIL held and
//! under `STATE`'s lock, which is never held while Python code can run.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyList;

/// Name of the pseudo-test for code run while modules load.
pub(crate) const IMPORT_NAME: &str = "<import>";
/// Slot of the `<import>` bucket; it always exists.
pub(crate) const IMPORT_SLOT: usize = 0;

thread_local! {
    /// How many module imports this thread is inside (the probe loader nests them).
    pub(crate) static IMPORT_DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Imports in progress over all threads, so the fast path reads thread-local storage only
/// while some module is loading.
pub(crate) static IMPORTING: AtomicU32 = AtomicU32::new(0);

pub(crate) fn importing() -> bool {
    IMPORTING.load(Ordering::Relaxed) > 0 && IMPORT_DEPTH.with(|d| d.get()) > 0
}

/// Multiplicative hasher for small integer keys (code object addresses, edge pairs):
/// SipHash's DoS resistance buys nothing here and costs the exact mode dearly.
#[derive(Default)]
pub(crate) struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        // hashbrown picks buckets with the low bits: fold the well-mixed high bits down.
        self.0 ^ (self.0 >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

pub(crate) type IntBuild = BuildHasherDefault<IntHasher>;

/// `(hits, edges)`: node numbers, and `(caller id, node)` pairs, both sorted.
pub(crate) type Recorded = (Vec<u32>, Vec<(u32, u32)>);

/// Hits and edges of one test (or of `<import>`).
pub(crate) struct Bucket {
    pub(crate) name: String,
    /// Per node: how many hits were seen, saturating at the capture limit (0 = not hit).
    pub(crate) counts: Vec<u8>,
    /// Nodes first hit since the last `drain`.
    pub(crate) new_hits: Vec<u32>,
    pub(crate) edges: HashSet<(u32, u32), IntBuild>,
    /// Edges first seen since the last `drain`.
    pub(crate) new_edges: Vec<(u32, u32)>,
    /// Per callee, 1 + the caller of its last recorded edge (0: none), so that a callee
    /// called again and again from one place skips the edge set (exact mode).
    pub(crate) last_caller: Vec<u32>,
    /// Nodes whose count reached the capture limit: `seen[n]` is true for them while this
    /// bucket is displayed.
    pub(crate) saturated: Vec<u32>,
}

impl Bucket {
    pub(crate) fn new(name: String, n_nodes: usize) -> Bucket {
        Bucket {
            name,
            counts: vec![0; n_nodes],
            last_caller: vec![0; n_nodes],
            new_hits: Vec::new(),
            edges: HashSet::default(),
            new_edges: Vec::new(),
            saturated: Vec::new(),
        }
    }

    pub(crate) fn all(&self) -> Recorded {
        let hits = self
            .counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, _)| i as u32)
            .collect();
        let mut edges: Vec<_> = self.edges.iter().copied().collect();
        edges.sort_unstable();
        (hits, edges)
    }

    pub(crate) fn drain(&mut self) -> Recorded {
        let mut hits = std::mem::take(&mut self.new_hits);
        hits.sort_unstable();
        let mut edges = std::mem::take(&mut self.new_edges);
        edges.sort_unstable();
        (hits, edges)
    }
}

pub(crate) struct Recorder {
    pub(crate) n_nodes: usize,
    pub(crate) exact: bool,
    /// `first-hits` mode: capture the caller on this many hits of a node per test.
    pub(crate) first_hits: u8,
    /// Caller id for frames the resolver cannot be asked about (no calling frame).
    pub(crate) external: u32,
    pub(crate) resolver: Py<PyAny>,
    /// Slot per bucket; `None` for a slot freed by `take_test`. Slot 0 is `<import>`.
    pub(crate) buckets: Vec<Option<Bucket>>,
    /// Bumped when a slot is freed, so a slow path that dropped the lock can tell.
    pub(crate) generations: Vec<u64>,
    pub(crate) by_name: HashMap<String, usize>,
    pub(crate) free: Vec<usize>,
    pub(crate) active: usize,
    /// Caller id per code object (by pointer; `code_refs` keeps them alive so a pointer is
    /// never reused for another code object).
    pub(crate) code_ids: HashMap<usize, u32, IntBuild>,
    pub(crate) code_refs: Vec<Py<PyAny>>,
    /// The probes' guard, a list of `n_nodes` bools: probed code runs
    /// `if not _carve_seen[N]: _carve_hit(N)`, so a node whose callers need not be captured
    /// again costs a list subscript instead of a call. It *displays* the active bucket's
    /// saturated nodes while no import is in progress anywhere, and is all false otherwise
    /// (so every probe reaches `hit`, which routes by thread). Exact mode never sets it.
    pub(crate) seen: Py<PyList>,
}

/// What the slow path must do after the lock is released.
pub(crate) struct Capture {
    pub(crate) slot: usize,
    pub(crate) generation: u64,
    /// First hit of this node in the bucket: register the probed code object too.
    pub(crate) register: bool,
}

impl Recorder {
    /// Records a hit; returns what to capture when the caller is wanted.
    #[inline(always)]
    pub(crate) fn record(&mut self, n: usize, importing: bool) -> Option<Capture> {
        if n >= self.n_nodes {
            return None;
        }
        let slot = if importing { IMPORT_SLOT } else { self.active };
        let bucket = self.buckets[slot].as_mut()?;
        let count = bucket.counts[n];
        if count >= self.first_hits && !self.exact {
            return None;
        }
        if count == 0 {
            bucket.new_hits.push(n as u32);
        }
        if count < u8::MAX {
            bucket.counts[n] = count + 1;
        }
        if !self.exact && count + 1 == self.first_hits {
            bucket.saturated.push(n as u32);
            if slot == self.active && IMPORTING.load(Ordering::Relaxed) == 0 {
                set_seen(&self.seen, n as u32, true);
            }
        }
        Some(Capture {
            slot,
            generation: self.generations[slot],
            register: count == 0,
        })
    }

    pub(crate) fn slot_for(&mut self, name: &str) -> usize {
        if name == IMPORT_NAME {
            return IMPORT_SLOT;
        }
        if let Some(&slot) = self.by_name.get(name) {
            return slot;
        }
        let bucket = Bucket::new(name.to_owned(), self.n_nodes);
        let slot = match self.free.pop() {
            Some(slot) => {
                self.buckets[slot] = Some(bucket);
                slot
            }
            None => {
                self.buckets.push(Some(bucket));
                self.generations.push(0);
                self.buckets.len() - 1
            }
        };
        self.by_name.insert(name.to_owned(), slot);
        slot
    }

    /// Shows (`on`) or hides a bucket's saturated nodes in `seen`.
    pub(crate) fn paint(&self, slot: usize, on: bool) {
        if let Some(bucket) = self.buckets[slot].as_ref() {
            for &n in &bucket.saturated {
                set_seen(&self.seen, n, on);
            }
        }
    }

    /// Makes `slot` the active bucket, keeping `seen` in step.
    pub(crate) fn activate(&mut self, slot: usize) {
        if slot != self.active && IMPORTING.load(Ordering::Relaxed) == 0 {
            self.paint(self.active, false);
            self.paint(slot, true);
        }
        self.active = slot;
    }

    pub(crate) fn add_edge(&mut self, slot: usize, generation: u64, edge: (u32, u32)) {
        if self.generations.get(slot) != Some(&generation) {
            return;
        }
        if let Some(bucket) = self.buckets[slot].as_mut() {
            let Some(last) = bucket.last_caller.get_mut(edge.1 as usize) else {
                return;
            };
            if *last == edge.0.wrapping_add(1) {
                return;
            }
            *last = edge.0.wrapping_add(1);
            if bucket.edges.insert(edge) {
                bucket.new_edges.push(edge);
            }
        }
    }
}

pub(crate) static STATE: Mutex<Option<Recorder>> = Mutex::new(None);

/// `seen[n] = on`. Runs no Python code (bools are never freed), so it is safe under the lock.
pub(crate) fn set_seen(seen: &Py<PyList>, n: u32, on: bool) {
    // SAFETY: callers hold the GIL (they run inside CPython calls into this module); the
    // list is ours and has `n_nodes` items, and `n < n_nodes`.
    unsafe {
        let value = if on { ffi::Py_True() } else { ffi::Py_False() };
        ffi::Py_IncRef(value);
        if ffi::PyList_SetItem(seen.as_ptr(), n as ffi::Py_ssize_t, value) != 0 {
            ffi::PyErr_Clear();
        }
    }
}

pub(crate) fn state() -> MutexGuard<'static, Option<Recorder>> {
    // A panic while holding the lock cannot leave the recorder half-updated in a way
    // that matters more than losing the process's trace, so poison is ignored.
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}
