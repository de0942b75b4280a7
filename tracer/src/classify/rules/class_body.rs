//! **class_body**: a candidate used in the body of a class that stays remains
//! ([`Reason::ClassBody`]). (A value binding in a class body gives the same reason, by the
//! `value_binding` rule.)
//!
//! Why: a class body runs when its module loads; the class that stays cannot be defined
//! without what its body uses. Used only in the body of an extracted class, it goes with it.
//!
//! Example: the F2P test calls `make_table`; `Config` (not the feature) calls it in its body:
//! ```python
//! def make_table(): ...     # carve: remained (used in the body of class Config, which stays)
//! class Config:
//!     table = make_table()
//! ```

use carve_languages::index::LoadRole;

use super::{Query, load_needers};
use crate::classify::Reason;
use crate::classify::context::Context;

pub(super) fn check(cx: &Context<'_>, id: &str, q: &Query<'_>, out: &mut Vec<Reason>) {
    out.extend(load_needers(cx, id, q, LoadRole::ClassBody).map(|of| Reason::ClassBody { of: of.clone() }));
}

#[cfg(test)]
mod tests {
    use carve_languages::index::LoadRole;

    use crate::classify::{Reason, Status};
    use crate::testutil::{F2P, base, reasons, run, status, trace};

    #[test]
    fn what_the_body_of_a_class_that_stays_uses_remains() {
        let index = base()
            .class("pkg/core.py::Config", 10)
            .class("pkg/core.py::FeatConfig", 20)
            .funcs(&["pkg/core.py::make_table", "pkg/core.py::feat_table"])
            .load("pkg/core.py::Config", "pkg/core.py::make_table", LoadRole::ClassBody)
            .load("pkg/core.py::FeatConfig", "pkg/core.py::feat_table", LoadRole::ClassBody)
            .build();
        let t = trace(&[(
            F2P,
            &[],
            &[(F2P, "pkg/core.py::make_table"), (F2P, "pkg/core.py::feat_table"), (F2P, "pkg/core.py::FeatConfig")],
        )]);
        let c = run(&index, &t);
        assert_eq!(status(&c, "pkg/core.py::make_table"), Status::Remained);
        assert_eq!(reasons(&c, "pkg/core.py::make_table")[0], Reason::ClassBody { of: "pkg/core.py::Config".into() });
        // The body of an extracted class keeps nothing.
        assert_eq!(status(&c, "pkg/core.py::FeatConfig"), Status::Extracted);
        assert_eq!(status(&c, "pkg/core.py::feat_table"), Status::Extracted);
    }
}
