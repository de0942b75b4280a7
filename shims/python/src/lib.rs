//! carve's native recorder (`carve_shim._native`): which probed definitions ran in each
//! test, and who called them.
//!
//! Probed modules call `hit(n)` at the entry of every function (`n` = the node number from
//! the probe map). The fast path — a node already hit in the current test whose caller
//! need not be captured again — takes one uncontended lock, one byte load and no
//! allocation. The slow path (first hit of a node in a test; the first `K` hits in
//! `first-hits` mode; every hit in `exact` mode) reads the calling frame through the
//! stable ABI (`PyEval_GetFrame`, then `f_back` / `f_code` attribute lookups), maps the
//! caller's code object to a caller id — cached by code object pointer, resolved once by
//! the Python `resolver` callback otherwise — and records the `(caller, callee)` edge.
//!
//! Hits go to a *bucket*: the current test's, or the `<import>` bucket while this thread is
//! inside a module import (`enter_import` / `exit_import`) or while no test is current.
//! The lock is never held while Python code can run (resolver calls, attribute lookups
//! that allocate and may trigger the garbage collector), so re-entrant hits cannot
//! deadlock. The pure-Python twin is `carve_shim/fallback.py`; keep the two in step.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::ffi::c_char;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyDict, PyList};

/// Name of the pseudo-test for code run while modules load.
const IMPORT_NAME: &str = "<import>";
/// Slot of the `<import>` bucket; it always exists.
const IMPORT_SLOT: usize = 0;

thread_local! {
    /// How many module imports this thread is inside (the probe loader nests them).
    static IMPORT_DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Imports in progress over all threads, so the fast path reads thread-local storage only
/// while some module is loading.
static IMPORTING: AtomicU32 = AtomicU32::new(0);

fn importing() -> bool {
    IMPORTING.load(Ordering::Relaxed) > 0 && IMPORT_DEPTH.with(|d| d.get()) > 0
}

/// Multiplicative hasher for small integer keys (code object addresses, edge pairs):
/// SipHash's DoS resistance buys nothing here and costs the exact mode dearly.
#[derive(Default)]
struct IntHasher(u64);

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

type IntBuild = BuildHasherDefault<IntHasher>;

/// Hits and edges of one test (or of `<import>`).
struct Bucket {
    name: String,
    /// Per node: how many hits were seen, saturating at the capture limit (0 = not hit).
    counts: Vec<u8>,
    /// Nodes first hit since the last `drain`.
    new_hits: Vec<u32>,
    edges: HashSet<(u32, u32), IntBuild>,
    /// Edges first seen since the last `drain`.
    new_edges: Vec<(u32, u32)>,
    /// Per callee, 1 + the caller of its last recorded edge (0: none), so that a callee
    /// called again and again from one place skips the edge set (exact mode).
    last_caller: Vec<u32>,
    /// Nodes whose count reached the capture limit: `seen[n]` is true for them while this
    /// bucket is displayed.
    saturated: Vec<u32>,
}

impl Bucket {
    fn new(name: String, n_nodes: usize) -> Bucket {
        Bucket { name, counts: vec![0; n_nodes], last_caller: vec![0; n_nodes], new_hits: Vec::new(), edges: HashSet::default(), new_edges: Vec::new(), saturated: Vec::new() }
    }

    fn all(&self) -> (Vec<u32>, Vec<(u32, u32)>) {
        let hits = self.counts.iter().enumerate().filter(|(_, c)| **c > 0).map(|(i, _)| i as u32).collect();
        let mut edges: Vec<_> = self.edges.iter().copied().collect();
        edges.sort_unstable();
        (hits, edges)
    }

    fn drain(&mut self) -> (Vec<u32>, Vec<(u32, u32)>) {
        let mut hits = std::mem::take(&mut self.new_hits);
        hits.sort_unstable();
        let mut edges = std::mem::take(&mut self.new_edges);
        edges.sort_unstable();
        (hits, edges)
    }
}

struct Recorder {
    n_nodes: usize,
    exact: bool,
    /// `first-hits` mode: capture the caller on this many hits of a node per test.
    first_hits: u8,
    /// Caller id for frames the resolver cannot be asked about (no calling frame).
    external: u32,
    resolver: Py<PyAny>,
    /// Slot per bucket; `None` for a slot freed by `take_test`. Slot 0 is `<import>`.
    buckets: Vec<Option<Bucket>>,
    /// Bumped when a slot is freed, so a slow path that dropped the lock can tell.
    generations: Vec<u64>,
    by_name: HashMap<String, usize>,
    free: Vec<usize>,
    active: usize,
    /// Caller id per code object (by pointer; `code_refs` keeps them alive so a pointer is
    /// never reused for another code object).
    code_ids: HashMap<usize, u32, IntBuild>,
    code_refs: Vec<Py<PyAny>>,
    /// The probes' guard, a list of `n_nodes` bools: probed code runs
    /// `if not _carve_seen[N]: _carve_hit(N)`, so a node whose callers need not be captured
    /// again costs a list subscript instead of a call. It *displays* the active bucket's
    /// saturated nodes while no import is in progress anywhere, and is all false otherwise
    /// (so every probe reaches `hit`, which routes by thread). Exact mode never sets it.
    seen: Py<PyList>,
}

/// What the slow path must do after the lock is released.
struct Capture {
    slot: usize,
    generation: u64,
    /// First hit of this node in the bucket: register the probed code object too.
    register: bool,
}

impl Recorder {
    /// Records a hit; returns what to capture when the caller is wanted.
    #[inline(always)]
    fn record(&mut self, n: usize, importing: bool) -> Option<Capture> {
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
        Some(Capture { slot, generation: self.generations[slot], register: count == 0 })
    }

    fn slot_for(&mut self, name: &str) -> usize {
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
    fn paint(&self, slot: usize, on: bool) {
        if let Some(bucket) = self.buckets[slot].as_ref() {
            for &n in &bucket.saturated {
                set_seen(&self.seen, n, on);
            }
        }
    }

    /// Makes `slot` the active bucket, keeping `seen` in step.
    fn activate(&mut self, slot: usize) {
        if slot != self.active && IMPORTING.load(Ordering::Relaxed) == 0 {
            self.paint(self.active, false);
            self.paint(slot, true);
        }
        self.active = slot;
    }

    fn add_edge(&mut self, slot: usize, generation: u64, edge: (u32, u32)) {
        if self.generations.get(slot) != Some(&generation) {
            return;
        }
        if let Some(bucket) = self.buckets[slot].as_mut() {
            let Some(last) = bucket.last_caller.get_mut(edge.1 as usize) else { return };
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

static STATE: Mutex<Option<Recorder>> = Mutex::new(None);

/// `seen[n] = on`. Runs no Python code (bools are never freed), so it is safe under the lock.
fn set_seen(seen: &Py<PyList>, n: u32, on: bool) {
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

fn state() -> MutexGuard<'static, Option<Recorder>> {
    // A panic while holding the lock cannot leave the recorder half-updated in a way
    // that matters more than losing the process's trace, so poison is ignored.
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

fn not_configured() -> PyErr {
    PyValueError::new_err("carve_shim._native: call configure(n_nodes, mode, first_hits, resolver, external) first")
}

/// The probe: `hit(n)`, a `METH_O` builtin so CPython calls it without argument parsing.
unsafe extern "C" fn hit(_module: *mut ffi::PyObject, arg: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: called by the interpreter with the GIL held and a valid `arg`.
    unsafe {
        let n = ffi::PyLong_AsSsize_t(arg);
        if n == -1 && !ffi::PyErr_Occurred().is_null() {
            return std::ptr::null_mut();
        }
        if n >= 0 {
            let importing = importing();
            let capture = match state().as_mut() {
                Some(rec) => rec.record(n as usize, importing),
                None => None,
            };
            if let Some(capture) = capture {
                capture_caller(Python::assume_attached(), n as u32, capture);
            }
        }
        let none = ffi::Py_None();
        ffi::Py_IncRef(none);
        none
    }
}

/// Slow path of `hit`: find the probed function's caller and record the edge.
fn capture_caller(py: Python<'_>, callee: u32, capture: Capture) {
    if capture.register {
        register_probed_code(py, callee);
    }
    // `sys._getframe(1)` materializes only the caller's frame object (usually long-lived),
    // where `PyEval_GetFrame().f_back` would allocate one for every probed call.
    // Err: "call stack is not deep enough" — called straight from C, no Python caller.
    let code = getframe_1(py).ok().and_then(|frame| frame_code(py, &frame));
    if PyErr::occurred(py) {
        drop(PyErr::take(py));
    }
    // Common case: the caller's code is known; one lock for lookup and edge.
    let key = code.as_ref().map(|c| c.as_ptr() as usize);
    {
        let mut guard = state();
        let Some(rec) = guard.as_mut() else { return };
        let caller = match key {
            None => Some(rec.external),
            Some(key) => rec.code_ids.get(&key).copied(),
        };
        if let Some(caller) = caller {
            rec.add_edge(capture.slot, capture.generation, (caller, callee));
            return;
        }
    }
    let Some(code) = code else { return };
    let Some(caller) = caller_id(py, code) else { return };
    if let Some(rec) = state().as_mut() {
        rec.add_edge(capture.slot, capture.generation, (caller, callee));
    }
}

unsafe extern "C" {
    /// Exported by every CPython >= 3.9 (limited API from 3.10); `f_code` through
    /// `getattr` costs an audit event and a generic attribute lookup on every call.
    fn PyFrame_GetCode(frame: *mut ffi::PyObject) -> *mut ffi::PyObject;
    /// Exported by every CPython >= 3.9 (`PyObject_Vectorcall` itself is inline on 3.9);
    /// skips building an argument tuple.
    fn PyObject_VectorcallDict(
        callable: *mut ffi::PyObject,
        args: *const *mut ffi::PyObject,
        nargsf: usize,
        kwdict: *mut ffi::PyObject,
    ) -> *mut ffi::PyObject;
}

/// The code object of a frame (new reference).
fn frame_code<'py>(py: Python<'py>, frame: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
    // SAFETY: `frame` is a frame object (from `sys._getframe` / `PyEval_GetFrame`); the
    // function returns a new, non-NULL reference.
    unsafe { Bound::from_owned_ptr_or_opt(py, PyFrame_GetCode(frame.as_ptr())) }
}

/// `sys._getframe(1)`.
fn getframe_1(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    static ONE: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    let one = ONE.get_or_init(py, || 1i32.into_pyobject(py).map(|o| o.into_any().unbind()).unwrap_or_else(|e| match e {}));
    let func = getframe(py)?;
    let args = [one.as_ptr()];
    // SAFETY: GIL held; `func` and `one` are live objects; one positional argument.
    unsafe { Bound::from_owned_ptr_or_err(py, PyObject_VectorcallDict(func.as_ptr(), args.as_ptr(), 1, std::ptr::null_mut())) }
}

fn getframe(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static GETFRAME: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    GETFRAME
        .get_or_try_init(py, || Ok::<_, PyErr>(py.import("sys")?.getattr("_getframe")?.unbind()))
        .map(|f| f.bind(py))
}

/// Maps the probed function's own code object to its node, so that when it calls other
/// probed functions the caller needs no lookup.
fn register_probed_code(py: Python<'_>, callee: u32) {
    // SAFETY: the GIL is held; `PyEval_GetFrame` returns a borrowed reference or NULL.
    let frame = unsafe { Bound::from_borrowed_ptr_or_opt(py, ffi::PyEval_GetFrame() as *mut ffi::PyObject) };
    let Some(frame) = frame else { return };
    let Some(code) = frame_code(py, &frame) else { return };
    let key = code.as_ptr() as usize;
    let mut guard = state();
    if let Some(rec) = guard.as_mut() {
        if let std::collections::hash_map::Entry::Vacant(v) = rec.code_ids.entry(key) {
            v.insert(callee);
            rec.code_refs.push(code.unbind());
        }
    }
}

fn external_id() -> Option<u32> {
    state().as_ref().map(|r| r.external)
}

/// The caller id of a code object: cached, or asked of the resolver once.
fn caller_id(py: Python<'_>, code: Bound<'_, PyAny>) -> Option<u32> {
    let key = code.as_ptr() as usize;
    let resolver = {
        let guard = state();
        let rec = guard.as_ref()?;
        if let Some(&id) = rec.code_ids.get(&key) {
            return Some(id);
        }
        rec.resolver.clone_ref(py)
    };
    let id = match resolver.call1(py, (&code,)).and_then(|v| v.extract::<u32>(py)) {
        Ok(id) => id,
        Err(err) => {
            err.write_unraisable(py, Some(&code));
            external_id()?
        }
    };
    let mut guard = state();
    let rec = guard.as_mut()?;
    if let std::collections::hash_map::Entry::Vacant(v) = rec.code_ids.entry(key) {
        v.insert(id);
        rec.code_refs.push(code.unbind());
    }
    Some(id)
}

/// Starts recording afresh: `n_nodes` probes, `mode` `first-hits` or `exact`, the caller
/// captured on the first `first_hits` hits of a node per test (first-hits mode),
/// `resolver(code) -> int` naming a caller's code object, and the caller id to use when a
/// probed function has no calling Python frame.
#[pyfunction]
#[pyo3(signature = (n_nodes, mode="first-hits", first_hits=4, resolver=None, external=None, seen=None))]
fn configure(
    py: Python<'_>,
    n_nodes: usize,
    mode: &str,
    first_hits: u8,
    resolver: Option<Py<PyAny>>,
    external: Option<u32>,
    seen: Option<Bound<'_, PyList>>,
) -> PyResult<()> {
    let exact = match mode {
        "first-hits" => false,
        "exact" => true,
        other => return Err(PyValueError::new_err(format!("unknown trace mode `{other}` (use `first-hits` or `exact`)"))),
    };
    let external = external.unwrap_or(n_nodes as u32);
    let resolver = match resolver {
        Some(r) => r,
        None => PyCFunction::new_closure(py, None, None, move |_args, _kw| -> PyResult<u32> { Ok(external) })?
            .into_any()
            .unbind(),
    };
    let seen = match seen {
        Some(list) => {
            if list.len() != n_nodes || list.iter().any(|v| v.is_truthy().unwrap_or(true)) {
                return Err(PyValueError::new_err("configure: `seen` must be a list of n_nodes False values"));
            }
            list.unbind()
        }
        None => PyList::new(py, std::iter::repeat_n(false, n_nodes))?.unbind(),
    };
    let rec = Recorder {
        seen,
        n_nodes,
        exact,
        first_hits: first_hits.max(1),
        external,
        resolver,
        buckets: vec![Some(Bucket::new(IMPORT_NAME.to_owned(), n_nodes))],
        generations: vec![0],
        by_name: HashMap::new(),
        free: Vec::new(),
        active: IMPORT_SLOT,
        code_ids: HashMap::default(),
        code_refs: Vec::new(),
    };
    let old = state().replace(rec);
    drop(old); // dropped after the lock is released: freeing code objects may run Python
    let depth = IMPORT_DEPTH.with(|d| d.replace(0));
    IMPORTING.fetch_sub(depth.min(IMPORTING.load(Ordering::Relaxed)), Ordering::Relaxed);
    Ok(())
}

/// Makes `name` the current test (`<import>` for none); later hits outside imports go to it.
#[pyfunction]
fn set_test(name: &str) -> PyResult<()> {
    let mut guard = state();
    let rec = guard.as_mut().ok_or_else(not_configured)?;
    let slot = rec.slot_for(name);
    rec.activate(slot);
    Ok(())
}

/// The current test's name.
#[pyfunction]
fn current_test() -> PyResult<String> {
    let guard = state();
    let rec = guard.as_ref().ok_or_else(not_configured)?;
    Ok(rec.buckets[rec.active].as_ref().map(|b| b.name.clone()).unwrap_or_else(|| IMPORT_NAME.to_owned()))
}

/// This thread starts running a module body: hits go to `<import>` until `exit_import`.
#[pyfunction]
fn enter_import() {
    IMPORT_DEPTH.with(|d| d.set(d.get().saturating_add(1)));
    let guard = state();
    if IMPORTING.fetch_add(1, Ordering::Relaxed) == 0 {
        if let Some(rec) = guard.as_ref() {
            rec.paint(rec.active, false);
        }
    }
}

#[pyfunction]
fn exit_import() {
    let was = IMPORT_DEPTH.with(|d| {
        let was = d.get();
        d.set(was.saturating_sub(1));
        was
    });
    if was > 0 {
        let guard = state();
        if IMPORTING.fetch_sub(1, Ordering::Relaxed) == 1 {
            if let Some(rec) = guard.as_ref() {
                rec.paint(rec.active, true);
            }
        }
    }
}

#[pyfunction]
fn import_depth() -> u32 {
    IMPORT_DEPTH.with(|d| d.get())
}

/// Everything `name` recorded — `(hits, edges)`, sorted — and forgets the test; `None`
/// when it recorded nothing. Taking the current test makes `<import>` current. Taking
/// `<import>` returns everything and clears it.
#[pyfunction]
fn take_test(name: &str) -> PyResult<Option<(Vec<u32>, Vec<(u32, u32)>)>> {
    let mut guard = state();
    let rec = guard.as_mut().ok_or_else(not_configured)?;
    if name == IMPORT_NAME {
        let n = rec.n_nodes;
        if rec.active == IMPORT_SLOT && IMPORTING.load(Ordering::Relaxed) == 0 {
            rec.paint(IMPORT_SLOT, false);
        }
        rec.generations[IMPORT_SLOT] += 1;
        let old = rec.buckets[IMPORT_SLOT].replace(Bucket::new(IMPORT_NAME.to_owned(), n));
        return Ok(old.map(|b| b.all()));
    }
    let Some(slot) = rec.by_name.remove(name) else { return Ok(None) };
    if rec.active == slot {
        rec.activate(IMPORT_SLOT);
    }
    let bucket = rec.buckets[slot].take();
    rec.generations[slot] += 1;
    rec.free.push(slot);
    Ok(bucket.map(|b| b.all()))
}

/// What `name` recorded since the last drain — `(hits, edges)`, sorted — keeping the
/// test (so a hit seen before is not reported again).
#[pyfunction]
fn drain(name: &str) -> PyResult<(Vec<u32>, Vec<(u32, u32)>)> {
    let mut guard = state();
    let rec = guard.as_mut().ok_or_else(not_configured)?;
    let slot = if name == IMPORT_NAME { Some(IMPORT_SLOT) } else { rec.by_name.get(name).copied() };
    Ok(match slot.and_then(|s| rec.buckets[s].as_mut()) {
        Some(bucket) => bucket.drain(),
        None => (Vec::new(), Vec::new()),
    })
}

/// Drains every bucket: `[(name, hits, edges)]` for those with something new, by name.
#[pyfunction]
fn flush() -> PyResult<Vec<(String, Vec<u32>, Vec<(u32, u32)>)>> {
    let mut guard = state();
    let rec = guard.as_mut().ok_or_else(not_configured)?;
    let mut out: Vec<_> = rec
        .buckets
        .iter_mut()
        .flatten()
        .filter_map(|b| {
            let (hits, edges) = b.drain();
            (!hits.is_empty() || !edges.is_empty()).then(|| (b.name.clone(), hits, edges))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// The probes' guard list (see `Recorder::seen`).
#[pyfunction]
fn seen(py: Python<'_>) -> PyResult<Py<PyList>> {
    let guard = state();
    let rec = guard.as_ref().ok_or_else(not_configured)?;
    Ok(rec.seen.clone_ref(py))
}

/// Counters for diagnostics: tests held, code objects resolved, mode.
#[pyfunction]
fn stats(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let guard = state();
    let rec = guard.as_ref().ok_or_else(not_configured)?;
    let d = PyDict::new(py);
    d.set_item("n_nodes", rec.n_nodes)?;
    d.set_item("mode", if rec.exact { "exact" } else { "first-hits" })?;
    d.set_item("first_hits", rec.first_hits)?;
    d.set_item("tests", rec.by_name.len())?;
    d.set_item("code_objects", rec.code_ids.len())?;
    Ok(d)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    // The method table must outlive the function object: leak it once per process.
    let def: &'static mut ffi::PyMethodDef = Box::leak(Box::new(ffi::PyMethodDef {
        ml_name: c"hit".as_ptr() as *const c_char,
        ml_meth: ffi::PyMethodDefPointer { PyCFunction: hit },
        ml_flags: ffi::METH_O,
        ml_doc: c"hit(n): record that probed node n ran (called at every function entry).".as_ptr() as *const c_char,
    }));
    // SAFETY: `def` is 'static; the module pointer is valid while `m` lives.
    let func = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyCFunction_NewEx(def, std::ptr::null_mut(), std::ptr::null_mut()))? };
    m.add("hit", func)?;
    m.add_function(wrap_pyfunction!(configure, m)?)?;
    m.add_function(wrap_pyfunction!(set_test, m)?)?;
    m.add_function(wrap_pyfunction!(current_test, m)?)?;
    m.add_function(wrap_pyfunction!(enter_import, m)?)?;
    m.add_function(wrap_pyfunction!(exit_import, m)?)?;
    m.add_function(wrap_pyfunction!(import_depth, m)?)?;
    m.add_function(wrap_pyfunction!(take_test, m)?)?;
    m.add_function(wrap_pyfunction!(drain, m)?)?;
    m.add_function(wrap_pyfunction!(flush, m)?)?;
    m.add_function(wrap_pyfunction!(stats, m)?)?;
    m.add("IMPORT", IMPORT_NAME)?;
    m.add_function(wrap_pyfunction!(seen, m)?)?;
    Ok(())
}
