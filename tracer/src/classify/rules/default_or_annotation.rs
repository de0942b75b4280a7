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
