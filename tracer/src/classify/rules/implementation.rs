//! **implementation**: an implementation of an interface for a type that stays remains
//! while that interface stays ([`Reason::Implementation`]; a Rust `impl Trait for Type`).
//! Its methods only the feature runs are still extracted: the mask keeps the block and
//! stubs them.
//!
//! Why: code that stays may use an implementation where no path names it (`dyn` coercions,
//! generic bounds, formatting), so the trace and the references cannot show that it is
//! unused. When the interface itself is extracted the mask deletes its implementations with
//! it. `by` names a definition that stays, runs or was reached, and names the interface
//! (not one of the interface's own implementations), when the index knows one.
//!
//! Example (Rust; `Circle` stays, `total` is run by a P2P test):
//! ```text
//! impl Shape for Circle { fn area(&self) -> f64 { .. } }  // remained (required by total); `area` stubbed
//! fn total(shapes: &[&dyn Shape]) -> f64 { .. }
//! impl Feat for Circle { .. }                              // extracted with `Feat`, which only the F2P tests reach
//! ```

use std::collections::{BTreeMap, BTreeSet};

use carve_languages::NodeId;
use carve_languages::index::{LoadReference, LoadRole};

use super::Query;
use crate::classify::Reason;
use crate::classify::context::{Context, encloses};

pub(super) fn check(cx: &Context<'_>, id: &str, q: &Query<'_>, out: &mut Vec<Reason>) {
    if let Some(of) = cx.implementations.get(id).filter(|of| q.stays(of))
        && let Some(r) = reason(cx, id, (*of).to_string(), q.extracted, q.origin)
    {
        out.push(r);
    }
}

/// The reason implementation `id` stays with `of` (the type that stays), unless the
/// interface it implements (its base) is extracted: the mask deletes an interface with
/// its implementations. `by`: the first definition that stays, runs or was reached, and
/// names the interface, other than the interface's own implementations.
fn reason(
    cx: &Context<'_>,
    id: &str,
    of: NodeId,
    extracted: &BTreeSet<NodeId>,
    origin: &BTreeMap<NodeId, Reason>,
) -> Option<Reason> {
    let def = cx.index.get(id)?;
    let interfaces: Vec<&str> =
        def.load_references.iter().filter(|l| l.role == LoadRole::BaseClass).map(|l| l.target.as_str()).collect();
    if interfaces.iter().any(|i| extracted.contains(*i)) {
        return None;
    }
    let interface = def.signature.bases.first().cloned().unwrap_or_else(|| {
        interfaces
            .first()
            .and_then(|i| cx.index.get(i))
            .map_or_else(|| def.name.trim_matches(|c| c == '<' || c == '>').to_string(), |i| i.name.clone())
    });
    let implements = |d: &str| {
        let mut cur = cx.index.get(d);
        while let Some(c) = cur {
            let base = |l: &LoadReference| l.role == LoadRole::BaseClass && interfaces.contains(&l.target.as_str());
            if interfaces.contains(&c.id.as_str()) || c.load_references.iter().any(base) {
                return true;
            }
            cur = c.parent.as_deref().and_then(|p| cx.index.get(p)).filter(|p| encloses(p, c));
        }
        false
    };
    let by = interfaces
        .iter()
        .flat_map(|i| cx.class_refs.get(*i).into_iter().flatten())
        .filter(|by| !extracted.contains(**by) && !implements(by))
        .filter(|by| cx.executed.contains(by.as_str()) || origin.contains_key(**by))
        .map(|by| (*by).clone())
        .min();
    Some(Reason::Implementation { interface, of, by })
}

#[cfg(test)]
mod tests {
    use carve_languages::index::LoadRole;

    use crate::classify::{Reason, Status};
    use crate::testutil::{F2P, P2P, base, reasons, run, status, trace};

    #[test]
    fn an_implementation_for_a_type_that_stays_remains_unless_its_interface_goes() {
        // Rust: `impl Shape for Circle` (Circle stays: a P2P test builds one) whose one method
        // only the F2P test runs; `total` (kept, run by a P2P test) names `Shape` (`&dyn
        // Shape`). The impl stays with its type — the method is stubbed — naming `total`.
        // `impl Feat for Circle` implements a trait only the F2P test reaches: both go.
        let index = base()
            .class("pkg/core.py::Shape", 10)
            .func("pkg/core.py::Shape.area", 11)
            .class("pkg/core.py::Feat", 14)
            .func("pkg/core.py::Feat.helper", 15)
            .class("pkg/core.py::Circle", 20)
            .func("pkg/core.py::Circle.new", 21)
            .class("pkg/core.py::Circle.<Shape>", 30)
            .func("pkg/core.py::Circle.<Shape>.area", 31)
            .class("pkg/core.py::Circle.<Feat>", 40)
            .func("pkg/core.py::Circle.<Feat>.go", 41)
            .class("pkg/core.py::Circle.<Display>", 50)
            .func("pkg/core.py::Circle.<Display>.fmt", 51)
            .funcs(&["pkg/core.py::total"])
            .refs("pkg/core.py::total", &["pkg/core.py::Shape"])
            .load("pkg/core.py::Circle.<Shape>", "pkg/core.py::Shape", LoadRole::BaseClass)
            .load("pkg/core.py::Circle.<Shape>", "pkg/core.py::Circle", LoadRole::Implementation)
            .load("pkg/core.py::Circle.<Feat>", "pkg/core.py::Feat", LoadRole::BaseClass)
            .load("pkg/core.py::Circle.<Feat>", "pkg/core.py::Circle", LoadRole::Implementation)
            .load("pkg/core.py::Circle.<Display>", "pkg/core.py::Circle", LoadRole::Implementation)
            .build();
        let t = trace(&[
            (
                F2P,
                &[],
                &[
                    (F2P, "pkg/core.py::Circle.<Shape>.area"),
                    (F2P, "pkg/core.py::Circle.<Feat>.go"),
                    ("pkg/core.py::Circle.<Feat>.go", "pkg/core.py::Feat.helper"),
                    (F2P, "pkg/core.py::Circle.<Display>.fmt"),
                ],
            ),
            (P2P, &[], &[(P2P, "pkg/core.py::Circle.new"), (P2P, "pkg/core.py::total")]),
        ]);
        let c = run(&index, &t);
        assert_eq!(
            reasons(&c, "pkg/core.py::Circle.<Shape>"),
            [
                Reason::Implementation {
                    interface: "Shape".into(),
                    of: "pkg/core.py::Circle".into(),
                    by: Some("pkg/core.py::total".into())
                },
                Reason::HasReachedMember { member: "pkg/core.py::Circle.<Shape>.area".into() }
            ],
            "{:#?}",
            c.nodes
        );
        assert_eq!(
            c.nodes["pkg/core.py::Circle.<Shape>"].reasons[0].to_string(),
            "implementation of `Shape` for pkg/core.py::Circle, which stays; required by pkg/core.py::total, which names `Shape` and stays"
        );
        assert_eq!(status(&c, "pkg/core.py::Circle.<Shape>.area"), Status::Extracted);
        // An interface of no definition of the index (`Display`): named by the block's own name.
        assert_eq!(
            c.nodes["pkg/core.py::Circle.<Display>"].reasons[0].to_string(),
            "implementation of `Display` for pkg/core.py::Circle, which stays (used where no path names it: `dyn` \
             coercions, generic bounds, formatting)"
        );
        assert_eq!(status(&c, "pkg/core.py::Circle.<Display>.fmt"), Status::Extracted);
        for gone in ["pkg/core.py::Feat", "pkg/core.py::Circle.<Feat>", "pkg/core.py::Circle.<Feat>.go"] {
            assert_eq!(status(&c, gone), Status::Extracted, "{gone}: {:#?}", c.nodes[gone]);
        }
        // The interface of a reached implementation is reached too (`implemented_by_reached`);
        // `Shape` stays: its implementation for `Circle` stays.
        assert_eq!(status(&c, "pkg/core.py::Shape"), Status::Remained);
        assert!(
            reasons(&c, "pkg/core.py::Shape").contains(&Reason::BaseClass { of: "pkg/core.py::Circle.<Shape>".into() })
        );
    }

    /// heck's `ToTrainCase` (issue 29): a trait whose one method has no body, implemented only
    /// for a type the index lacks (`impl ToLabel for u32`, anchored to the trait). The F2P test
    /// runs the impl's method; the trait never runs. It is reached through its implementation
    /// and goes with it. An implementation that stays (`Item`'s, which a P2P test runs) keeps
    /// it, and then the impl for `u32` stays with its trait.
    #[test]
    fn a_trait_only_the_feature_implements_goes_with_its_implementation() {
        let index = |with_item: bool| {
            let b = base()
                .class("pkg/core.py::ToLabel", 10)
                .func("pkg/core.py::ToLabel.to_label", 11)
                .class("pkg/core.py::u32.<ToLabel>", 20)
                .func("pkg/core.py::u32.<ToLabel>.to_label", 21)
                .load("pkg/core.py::u32.<ToLabel>", "pkg/core.py::ToLabel", LoadRole::BaseClass)
                .load("pkg/core.py::u32.<ToLabel>", "pkg/core.py::ToLabel", LoadRole::Implementation);
            if !with_item {
                return b.build();
            }
            b.class("pkg/core.py::Item", 30)
                .class("pkg/core.py::Item.<ToLabel>", 40)
                .func("pkg/core.py::Item.<ToLabel>.to_label", 41)
                .load("pkg/core.py::Item.<ToLabel>", "pkg/core.py::ToLabel", LoadRole::BaseClass)
                .load("pkg/core.py::Item.<ToLabel>", "pkg/core.py::Item", LoadRole::Implementation)
                .build()
        };
        let t = trace(&[
            (F2P, &[], &[(F2P, "pkg/core.py::u32.<ToLabel>.to_label")]),
            (P2P, &[], &[(P2P, "pkg/core.py::Item.<ToLabel>.to_label")]),
        ]);
        let c = run(&index(false), &t);
        for gone in ["pkg/core.py::ToLabel", "pkg/core.py::ToLabel.to_label", "pkg/core.py::u32.<ToLabel>"] {
            assert_eq!(status(&c, gone), Status::Extracted, "{gone}: {:#?}", c.nodes);
        }
        assert_eq!(
            reasons(&c, "pkg/core.py::ToLabel"),
            [Reason::ImplementedByReached { implementation: "pkg/core.py::u32.<ToLabel>".into() }]
        );
        let c = run(&index(true), &t);
        assert_eq!(
            reasons(&c, "pkg/core.py::ToLabel")[0],
            Reason::BaseClass { of: "pkg/core.py::Item.<ToLabel>".into() }
        );
        assert_eq!(status(&c, "pkg/core.py::u32.<ToLabel>"), Status::Remained);
        assert_eq!(status(&c, "pkg/core.py::u32.<ToLabel>.to_label"), Status::Extracted);
    }
}
