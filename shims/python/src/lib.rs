//! carve's native recorder (`carve_shim._native`): which probed definitions ran in each
//! test, and who called them.
//!
//! Probed modules run `if not _carve_seen[N]: _carve_hit(N)` at the entry of every function
//! (`N` = the node number from the probe map; `_carve_seen` is the guard list, see
//! `state::Recorder::seen`). `hit` ([`capture`]) records the node for the current test and,
//! on its first `K` hits per test (`first-hits` mode) or on every call (`exact` mode),
//! captures the caller: `sys._getframe(1)` and `PyFrame_GetCode` give the caller's code
//! object, which maps to a caller id — cached by code object pointer, resolved once by the
//! Python `resolver` callback otherwise. Its fast path takes one uncontended lock and no
//! allocation; once a node needs nothing more in the current test the guard list skips
//! the call altogether.
//!
//! Hits go to a *bucket* ([`state`]): the current test's, or the `<import>` bucket while
//! this thread is inside a module import (`enter_import` / `exit_import`) or while no test
//! is current. The pure-Python twin is `carve_shim/fallback.py`; keep the two in step.

mod capture;
mod state;

use std::collections::HashMap;
use std::ffi::c_char;
use std::sync::atomic::Ordering;

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyDict, PyList};

use state::{Bucket, IMPORT_DEPTH, IMPORT_NAME, IMPORT_SLOT, IMPORTING, Recorded, Recorder, state};

fn not_configured() -> PyErr {
    PyValueError::new_err(
        "carve_shim._native: call configure(n_nodes, mode, first_hits, resolver, external) first",
    )
}

/// Starts recording afresh: `n_nodes` probes, `mode` `first-hits` or `exact`, the caller
/// captured on the first `first_hits` hits of a node per test (first-hits mode),
/// `resolver(code) -> int` naming a caller's code object, and the caller id to use when a
/// probed function has no calling Python frame; `seen`: the guard list (n_nodes False).
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
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown trace mode `{other}` (use `first-hits` or `exact`)"
            )));
        }
    };
    let external = external.unwrap_or(n_nodes as u32);
    let resolver = match resolver {
        Some(r) => r,
        None => PyCFunction::new_closure(py, None, None, move |_args, _kw| -> PyResult<u32> {
            Ok(external)
        })?
        .into_any()
        .unbind(),
    };
    let seen = match seen {
        Some(list) => {
            if list.len() != n_nodes || list.iter().any(|v| v.is_truthy().unwrap_or(true)) {
                return Err(PyValueError::new_err(
                    "configure: `seen` must be a list of n_nodes False values",
                ));
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
    IMPORTING.fetch_sub(
        depth.min(IMPORTING.load(Ordering::Relaxed)),
        Ordering::Relaxed,
    );
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
    Ok(rec.buckets[rec.active]
        .as_ref()
        .map(|b| b.name.clone())
        .unwrap_or_else(|| IMPORT_NAME.to_owned()))
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
fn take_test(name: &str) -> PyResult<Option<Recorded>> {
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
    let Some(slot) = rec.by_name.remove(name) else {
        return Ok(None);
    };
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
fn drain(name: &str) -> PyResult<Recorded> {
    let mut guard = state();
    let rec = guard.as_mut().ok_or_else(not_configured)?;
    let slot = if name == IMPORT_NAME {
        Some(IMPORT_SLOT)
    } else {
        rec.by_name.get(name).copied()
    };
    Ok(match slot.and_then(|s| rec.buckets[s].as_mut()) {
        Some(bucket) => bucket.drain(),
        None => (Vec::new(), Vec::new()),
    })
}

/// Drains every bucket: `[(name, hits, edges)]` for those with something new, by name.
#[pyfunction]
#[allow(clippy::type_complexity)] // the Python-facing shape: [(name, hits, edges)]
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
        ml_meth: ffi::PyMethodDefPointer {
            PyCFunction: capture::hit,
        },
        ml_flags: ffi::METH_O,
        ml_doc: c"hit(n): record that probed node n ran (called at every function entry).".as_ptr()
            as *const c_char,
    }));
    // SAFETY: `def` is 'static; the module pointer is valid while `m` lives.
    let func = unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            ffi::PyCFunction_NewEx(def, std::ptr::null_mut(), std::ptr::null_mut()),
        )?
    };
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
