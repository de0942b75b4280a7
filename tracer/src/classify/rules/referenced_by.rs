//! **referenced_by**: a candidate class named in the body of a definition that stays and
//! runs (a P2P test or a module load runs it, or the F2P tests reached it and it remains)
//! remains ([`Reason::ReferencedBy`]); so does any candidate definition named in the body of
//! a definition that stays and runs while modules load.
//!
//! Why: a class is often used where the trace records no call of its own (`isinstance(x,
//! Csv)`, `except KeyWarning`, a dispatch table inside a function): code that stays and runs
//! would fail without it. Code that stays and never runs keeps nothing, nor a naming only in
//! call statements the mask deletes with their callee.
//!
//! A module load that runs a function naming another without calling it (structlog's
//! `_make_filtering_bound_logger(level)`, run for every level when `_native.py` loads, puts
//! `_nop`, `_anop`, `exception` into the classes it makes) fails without it too; the trace
//! records no call there either. Only load-time code (a function that P2P tests run names
//! functions in branches they may never take), and only module-level definitions (see
//! `check`).
//!
//! Example: the F2P test builds a `Csv`; `dispatch`, run by a P2P test, names it:
//! ```python
//! class Csv:                          # carve: remained (named by dispatch, which stays and runs)
//!     def __init__(self): ...         # carve: extracted
//! def dispatch(kind):
//!     return Csv if kind == "csv" else None
//! ```

use super::Query;
use super::named_only_by_removed::names_only_in_deleted_calls;
use crate::classify::Reason;
use crate::classify::context::Context;

pub(super) fn check(cx: &Context<'_>, id: &str, q: &Query<'_>, out: &mut Vec<Reason>) {
    for by in cx.class_refs.get(id).into_iter().flatten() {
        // Kept code that runs, or a reached definition that remains; not where it names
        // `id` only in call statements the mask deletes.
        if *by != id
            && q.stays(by)
            && (cx.executed.contains(by.as_str()) || q.origin.contains_key(*by))
            && !names_only_in_deleted_calls(cx, by, id, q.extracted)
        {
            out.push(Reason::ReferencedBy { by: (*by).clone() });
        }
    }
    // Module-level definitions only: code that runs at load names a method as `Class.name`
    // in a branch it may not take (attrs' module `__getattr__`, probed by pytest at import,
    // names `VersionInfo._from_version_string` for one attribute), and keeping the method
    // keeps its class, whose other methods the feature may still take.
    let module_level = cx.index.get(id).is_some_and(|d| d.parent.is_none());
    if cx.class_refs.contains_key(id) || !module_level {
        return;
    }
    for by in cx.body_refs.get(id).into_iter().flatten() {
        if *by != id
            && q.stays(by)
            && cx.import_time.contains(by.as_str())
            && !names_only_in_deleted_calls(cx, by, id, q.extracted)
        {
            out.push(Reason::ReferencedBy { by: (*by).clone() });
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::classify::{Reason, Status};
    use crate::testutil::{F2P, P2P, base, reasons, run, status, trace};
    use crate::trace::IMPORT_TEST;

    #[test]
    fn a_class_named_by_code_that_stays_and_runs_remains() {
        let index = base()
            .class("pkg/core.py::Csv", 10)
            .func("pkg/core.py::Csv.__init__", 11)
            .funcs(&["pkg/core.py::dispatch", "pkg/core.py::dead"])
            .refs("pkg/core.py::dispatch", &["pkg/core.py::Csv"])
            .build();
        let t =
            trace(&[(F2P, &[], &[(F2P, "pkg/core.py::Csv.__init__")]), (P2P, &[], &[(P2P, "pkg/core.py::dispatch")])]);
        let c = run(&index, &t);
        assert_eq!(reasons(&c, "pkg/core.py::Csv")[0], Reason::ReferencedBy { by: "pkg/core.py::dispatch".into() });
        assert_eq!(status(&c, "pkg/core.py::Csv.__init__"), Status::Extracted);

        // Named only by kept code that never runs: the class goes.
        let index = base()
            .class("pkg/core.py::Csv", 10)
            .func("pkg/core.py::Csv.__init__", 11)
            .funcs(&["pkg/core.py::dead"])
            .refs("pkg/core.py::dead", &["pkg/core.py::Csv"])
            .build();
        let c = run(&index, &trace(&[(F2P, &[], &[(F2P, "pkg/core.py::Csv.__init__")])]));
        assert_eq!(status(&c, "pkg/core.py::Csv"), Status::Extracted);
    }

    /// A method named by load-time code goes with the feature all the same (attrs'
    /// `VersionInfo._from_version_string`, named by the module's `__getattr__`).
    #[test]
    fn a_method_named_by_load_time_code_is_not_kept_for_it() {
        let index = base()
            .class("pkg/core.py::Version", 10)
            .func("pkg/core.py::Version.parse", 11)
            .funcs(&["pkg/core.py::module_getattr"])
            .refs("pkg/core.py::module_getattr", &["pkg/core.py::Version.parse"])
            .build();
        let t = trace(&[
            (F2P, &[], &[(F2P, "pkg/core.py::Version.parse")]),
            (IMPORT_TEST, &[], &[("<module>pkg/core.py", "pkg/core.py::module_getattr")]),
        ]);
        let c = run(&index, &t);
        assert_eq!(status(&c, "pkg/core.py::Version.parse"), Status::Extracted);
    }

    /// structlog's `_make_filtering_bound_logger`, run when `_native.py` loads, puts `_nop`
    /// (only the F2P tests call it) into the classes it makes: `_nop` stays. `_fmt`, named
    /// only by `render`, which P2P tests run, goes with the feature.
    #[test]
    fn a_function_named_by_load_time_code_remains() {
        let index = base()
            .funcs(&["pkg/core.py::_nop", "pkg/core.py::make_logger", "pkg/core.py::_fmt", "pkg/core.py::render"])
            .refs("pkg/core.py::make_logger", &["pkg/core.py::_nop"])
            .refs("pkg/core.py::render", &["pkg/core.py::_fmt"])
            .build();
        let t = trace(&[
            (F2P, &[], &[(F2P, "pkg/core.py::_nop"), (F2P, "pkg/core.py::_fmt")]),
            (P2P, &[], &[(P2P, "pkg/core.py::render")]),
            (IMPORT_TEST, &[], &[("<module>pkg/core.py", "pkg/core.py::make_logger")]),
        ]);
        let c = run(&index, &t);
        assert_eq!(reasons(&c, "pkg/core.py::_nop")[0], Reason::ReferencedBy { by: "pkg/core.py::make_logger".into() });
        assert_eq!(status(&c, "pkg/core.py::_fmt"), Status::Extracted);
    }
}
