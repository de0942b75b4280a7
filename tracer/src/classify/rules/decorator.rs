//! **decorator**: a candidate that decorates a definition that stays remains
//! ([`Reason::Decorator`]).
//!
//! Why: a decorator runs when the decorated definition is defined; without it the module
//! that stays no longer loads. What a kept decorator needs to load stays in turn (its
//! defaults, its annotations), through the fixpoint. A decorator only of extracted code goes
//! with it.
//!
//! Example: the F2P test runs `deco`; `kept` (not the feature) is decorated by it:
//! ```python
//! def deco(f): ...   # carve: remained (decorator of kept, which stays)
//! @deco
//! def kept(): ...
//! ```

use carve_languages::index::LoadRole;

use super::{Query, load_needers};
use crate::classify::Reason;
use crate::classify::context::Context;

pub(super) fn check(cx: &Context<'_>, id: &str, q: &Query<'_>, out: &mut Vec<Reason>) {
    out.extend(load_needers(cx, id, q, LoadRole::Decorator).map(|of| Reason::Decorator { of: of.clone() }));
}

#[cfg(test)]
mod tests {
    use carve_languages::index::LoadRole;

    use crate::classify::{Reason, Status};
    use crate::testutil::{F2P, base, reasons, run, status, trace};

    #[test]
    fn decorator_of_kept_code_remains_and_load_needs_propagate() {
        let index = base()
            .funcs(&[
                "pkg/core.py::feat",
                "pkg/core.py::deco",
                "pkg/core.py::DEFAULT_FACTORY",
                "pkg/core.py::kept",
                "pkg/core.py::feat_deco",
            ])
            .load("pkg/core.py::kept", "pkg/core.py::deco", LoadRole::Decorator)
            .load("pkg/core.py::deco", "pkg/core.py::DEFAULT_FACTORY", LoadRole::DefaultOrAnnotation)
            .load("pkg/core.py::feat", "pkg/core.py::feat_deco", LoadRole::Decorator)
            .build();
        let t = trace(&[(
            F2P,
            &[],
            &[
                (F2P, "pkg/core.py::feat"),
                ("pkg/core.py::feat", "pkg/core.py::deco"),
                ("pkg/core.py::deco", "pkg/core.py::DEFAULT_FACTORY"),
                ("pkg/core.py::feat", "pkg/core.py::feat_deco"),
            ],
        )]);
        let c = run(&index, &t);
        assert_eq!(reasons(&c, "pkg/core.py::deco")[0], Reason::Decorator { of: "pkg/core.py::kept".into() });
        assert_eq!(status(&c, "pkg/core.py::deco"), Status::Remained);
        // `deco` stays, so what it needs to load stays too.
        assert_eq!(
            reasons(&c, "pkg/core.py::DEFAULT_FACTORY")[0],
            Reason::DefaultOrAnnotation { of: "pkg/core.py::deco".into() }
        );
        // A decorator only of extracted code goes with it.
        assert_eq!(status(&c, "pkg/core.py::feat_deco"), Status::Extracted);
        assert!(!c.nodes.contains_key("pkg/core.py::kept"), "unreached code is not classified");
    }
}
