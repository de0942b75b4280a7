//! **named_by_config**: a candidate named by its dotted path in a test-configuration file
//! (`filterwarnings` in `pyproject.toml`) remains ([`Reason::NamedByConfig`]), unless the
//! mask can take that line out with it.
//!
//! Why: the test runner imports what the configuration names before it collects any test; a
//! missing name fails every test. A lone list entry (`removable`) is no reason to keep: the
//! mask deletes the line with what it names and the gold patch puts it back, as with
//! `__all__`.
//!
//! Example:
//! ```toml
//! [tool.pytest.ini_options]
//! filterwarnings = ["error", "ignore::pkg.core.KeyWarning"]  # not a lone entry: KeyWarning remains
//! ```

use std::collections::BTreeMap;

use carve_languages::DefinitionIndex;

use super::Query;
use crate::classify::Reason;
use crate::classify::context::Context;

pub(super) fn check(cx: &Context<'_>, id: &str, _: &Query<'_>, out: &mut Vec<Reason>) {
    for (path, line) in cx.config_refs.get(id).into_iter().flatten() {
        out.push(Reason::NamedByConfig { path: (*path).to_string(), line: *line });
    }
}

/// Target -> the configuration lines naming it that the mask cannot take out: (file, line).
pub(in crate::classify) fn lines(index: &DefinitionIndex) -> BTreeMap<&str, Vec<(&str, usize)>> {
    let mut lines: BTreeMap<&str, Vec<(&str, usize)>> = BTreeMap::new();
    // A lone list entry is no reason to keep: the mask takes the line out with what it
    // names and the gold patch puts it back, as with `__all__`.
    for r in index.config_references.iter().filter(|r| !r.removable) {
        lines.entry(r.target.as_str()).or_default().push((r.path.as_str(), r.line));
    }
    lines
}

#[cfg(test)]
mod tests {
    use carve_languages::index::ConfigReference;

    use crate::classify::{Reason, Status};
    use crate::testutil::{F2P, P2P, base, reasons, run, status, trace};

    /// A warning class only the feature raises (no test runs it) goes with the feature; a
    /// test-configuration line naming it keeps it only when the mask cannot take that line out
    /// alone (`removable`: a lone list entry, deleted with it like an `__all__` entry).
    #[test]
    fn a_configuration_line_keeps_a_definition_only_when_it_cannot_go_with_it() {
        let build = |removable: bool| {
            let mut index = base()
                .class("pkg/core.py::KeyWarning", 40)
                .funcs(&["pkg/core.py::feat"])
                .refs("pkg/core.py::feat", &["pkg/core.py::KeyWarning"])
                .build();
            index.config_references = vec![ConfigReference {
                path: "pyproject.toml".into(),
                line: 4,
                target: "pkg/core.py::KeyWarning".into(),
                removable,
            }];
            index
        };
        let t = trace(&[(F2P, &[], &[(F2P, "pkg/core.py::feat")]), (P2P, &[], &[])]);
        let c = run(&build(true), &t);
        assert_eq!(status(&c, "pkg/core.py::KeyWarning"), Status::Extracted, "{:#?}", c.nodes);
        assert_eq!(
            reasons(&c, "pkg/core.py::KeyWarning"),
            [Reason::NamedOnlyByFeature { by: "pkg/core.py::feat".into() }]
        );
        let c = run(&build(false), &t);
        assert_eq!(c.status("pkg/core.py::KeyWarning"), None, "{:#?}", c.nodes);
    }

    #[test]
    fn a_definition_a_configuration_line_names_remains_with_the_line() {
        let mut index = base().class("pkg/core.py::KeyWarning", 40).build();
        index.config_references = vec![ConfigReference {
            path: "pyproject.toml".into(),
            line: 4,
            target: "pkg/core.py::KeyWarning".into(),
            removable: false,
        }];
        let t = trace(&[(F2P, &[], &[(F2P, "pkg/core.py::KeyWarning")]), (P2P, &[], &[])]);
        let c = run(&index, &t);
        assert_eq!(status(&c, "pkg/core.py::KeyWarning"), Status::Remained, "{:#?}", c.nodes);
        assert_eq!(
            reasons(&c, "pkg/core.py::KeyWarning")[0],
            Reason::NamedByConfig { path: "pyproject.toml".into(), line: 4 }
        );
    }
}
