//! `carve index`: print the definition index of the repository.

use anyhow::Result;

use crate::Status;
use crate::cli::Common;
use crate::output::emit;

pub fn run(common: &Common) -> Result<Status> {
    let session = super::open(common)?;
    let idx = &session.index;
    emit(common.format, idx, || {
        let mut s = String::new();
        for f in idx.files.values() {
            s.push_str(&format!("{}{}\n", f.path, if f.is_test { "  (test)" } else { "" }));
            for d in &f.definitions {
                if let Some(def) = idx.get(d) {
                    s.push_str(&format!("  {:>5}  {:?}  {}\n", def.span.start_line, def.kind, def.qualname));
                }
            }
        }
        for sk in &idx.skipped {
            s.push_str(&format!("skipped {}: {}\n", sk.path, sk.reason));
        }
        s
    })?;
    Ok(Status::Success)
}
