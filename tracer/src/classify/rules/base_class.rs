//! **base_class**: a candidate class that a class that stays inherits from remains
//! ([`Reason::BaseClass`]).
//!
//! Why: a class statement evaluates its bases when its module loads; the subclass that stays
//! needs them. The base stays as a container only: its methods only the feature reaches
//! still go (they are judged one by one), and a subclass only the feature uses goes whole.
//!
//! Example: the F2P test runs `Feat.go`, which calls the inherited `Base.run`:
//! ```python
//! class Base:              # carve: remained (base class of Sub, which stays)
//!     def run(self): ...   # carve: extracted
//! class Sub(Base): ...     # not reached: stays
//! class Feat(Base):        # carve: extracted
//!     def go(self): return self.run()
//! ```

use carve_languages::index::LoadRole;

use super::{Query, load_needers};
use crate::classify::Reason;
use crate::classify::context::Context;

pub(super) fn check(cx: &Context<'_>, id: &str, q: &Query<'_>, out: &mut Vec<Reason>) {
    out.extend(load_needers(cx, id, q, LoadRole::BaseClass).map(|of| Reason::BaseClass { of: of.clone() }));
}

#[cfg(test)]
mod tests {
    use carve_languages::index::LoadRole;

    use crate::classify::{Reason, Status};
    use crate::testutil::{F2P, base, reasons, run, status, trace};

    #[test]
    fn base_class_of_kept_class_remains_but_its_feature_methods_go() {
        let index = base()
            .class("pkg/core.py::Base", 10)
            .func("pkg/core.py::Base.run", 11)
            .func("pkg/core.py::Base.feature_step", 13)
            .class("pkg/core.py::Sub", 20)
            .class("pkg/core.py::Feat", 30)
            .func("pkg/core.py::Feat.go", 31)
            .load("pkg/core.py::Sub", "pkg/core.py::Base", LoadRole::BaseClass)
            .load("pkg/core.py::Feat", "pkg/core.py::Base", LoadRole::BaseClass)
            .build();
        let t = trace(&[(
            F2P,
            &[],
            &[
                (F2P, "pkg/core.py::Feat.go"),
                ("pkg/core.py::Feat.go", "pkg/core.py::Base.run"),
                ("pkg/core.py::Base.run", "pkg/core.py::Base.feature_step"),
            ],
        )]);
        let c = run(&index, &t);
        assert_eq!(status(&c, "pkg/core.py::Base"), Status::Remained);
        assert_eq!(
            reasons(&c, "pkg/core.py::Base"),
            [
                Reason::BaseClass { of: "pkg/core.py::Sub".into() },
                Reason::HasReachedMember { member: "pkg/core.py::Base.feature_step".into() }
            ]
        );
        assert_eq!(status(&c, "pkg/core.py::Base.run"), Status::Extracted);
        assert_eq!(status(&c, "pkg/core.py::Base.feature_step"), Status::Extracted);
        assert_eq!(status(&c, "pkg/core.py::Feat"), Status::Extracted);
        assert_eq!(status(&c, "pkg/core.py::Feat.go"), Status::Extracted);
    }
}
