//! **default_or_annotation**: a candidate used in a default value or an annotation of a
//! definition that stays remains ([`Reason::DefaultOrAnnotation`]).
//!
//! Why: defaults and (unquoted) annotations are evaluated when the definition is defined,
//! at module load; the module that stays no longer loads without them. Used only by
//! extracted definitions, it goes with them.
//!
//! Example: the F2P test runs `make_default`; `kept` (not the feature) uses it as a default:
//! ```python
//! def make_default(): ...             # carve: remained (used in a default or annotation of kept)
//! def kept(x=make_default()): ...
//! ```

use carve_languages::index::LoadRole;

use super::{Query, load_needers};
use crate::classify::Reason;
use crate::classify::context::Context;

pub(super) fn check(cx: &Context<'_>, id: &str, q: &Query<'_>, out: &mut Vec<Reason>) {
    let needers = load_needers(cx, id, q, LoadRole::DefaultOrAnnotation);
    out.extend(needers.map(|of| Reason::DefaultOrAnnotation { of: of.clone() }));
}

#[cfg(test)]
mod tests {
    use carve_languages::index::LoadRole;

    use crate::classify::{Reason, Status};
    use crate::testutil::{F2P, base, reasons, run, status, trace};

    #[test]
    fn a_default_of_kept_code_remains_and_one_of_extracted_code_goes() {
        let index = base()
            .funcs(&[
                "pkg/core.py::feat",
                "pkg/core.py::kept",
                "pkg/core.py::make_default",
                "pkg/core.py::feat_default",
            ])
            .load("pkg/core.py::kept", "pkg/core.py::make_default", LoadRole::DefaultOrAnnotation)
            .load("pkg/core.py::feat", "pkg/core.py::feat_default", LoadRole::DefaultOrAnnotation)
            .build();
        let t = trace(&[(
            F2P,
            &[],
            &[
                (F2P, "pkg/core.py::feat"),
                ("pkg/core.py::feat", "pkg/core.py::make_default"),
                ("pkg/core.py::feat", "pkg/core.py::feat_default"),
            ],
        )]);
        let c = run(&index, &t);
        assert_eq!(status(&c, "pkg/core.py::make_default"), Status::Remained);
        assert_eq!(
            reasons(&c, "pkg/core.py::make_default"),
            [
                Reason::DefaultOrAnnotation { of: "pkg/core.py::kept".into() },
                Reason::Reached { from: "pkg/core.py::feat".into() }
            ]
        );
        assert_eq!(status(&c, "pkg/core.py::feat_default"), Status::Extracted);
        assert_eq!(status(&c, "pkg/core.py::feat"), Status::Extracted);
    }
}
