//! The probe `hit(n)` and its slow path: finding the probed function's caller.

use pyo3::ffi;
use pyo3::prelude::*;

use crate::state::{Capture, importing, state};

/// The probe: `hit(n)`, a `METH_O` builtin so CPython calls it without argument parsing.
pub(crate) unsafe extern "C" fn hit(
    _module: *mut ffi::PyObject,
    arg: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
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
    let Some(caller) = caller_id(py, code) else {
        return;
    };
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
    let one = ONE.get_or_init(py, || {
        1i32.into_pyobject(py)
            .map(|o| o.into_any().unbind())
            .unwrap_or_else(|e| match e {})
    });
    let func = getframe(py)?;
    let args = [one.as_ptr()];
    // SAFETY: GIL held; `func` and `one` are live objects; one positional argument.
    unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            PyObject_VectorcallDict(func.as_ptr(), args.as_ptr(), 1, std::ptr::null_mut()),
        )
    }
}

fn getframe(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static GETFRAME: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    GETFRAME
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("sys")?.getattr("_getframe")?.unbind())
        })
        .map(|f| f.bind(py))
}

/// Maps the probed function's own code object to its node, so that when it calls other
/// probed functions the caller needs no lookup.
fn register_probed_code(py: Python<'_>, callee: u32) {
    // SAFETY: the GIL is held; `PyEval_GetFrame` returns a borrowed reference or NULL.
    let frame = unsafe {
        Bound::from_borrowed_ptr_or_opt(py, ffi::PyEval_GetFrame() as *mut ffi::PyObject)
    };
    let Some(frame) = frame else { return };
    let Some(code) = frame_code(py, &frame) else {
        return;
    };
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
    let id = match resolver
        .call1(py, (&code,))
        .and_then(|v| v.extract::<u32>(py))
    {
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
