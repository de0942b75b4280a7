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
