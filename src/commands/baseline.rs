//! `carve baseline`: run the suite twice and print one status per test.

use anyhow::Result;

use crate::Status;
use crate::cli::Common;
use crate::output::emit;
use carve_pipeline::baseline::{Baseline, baseline};

pub fn run(common: &Common, tests: &[String], fresh: bool) -> Result<Status> {
    let session = super::open(common)?;
    let selection = (!tests.is_empty()).then_some(tests);
    let b = baseline(&session, selection, fresh)?;
    emit(common.format, &b, || text(&b))?;
    Ok(Status::Success)
}

fn text(b: &Baseline) -> String {
    let mut s = String::new();
    for (id, e) in &b.tests {
        let st = format!("{:?}", e.status).to_lowercase();
        s.push_str(&format!("{:<8} {}{}\n", st, id, if e.flaky { "  (flaky)" } else { "" }));
    }
    let counts: Vec<String> = b.counts().iter().map(|(k, v)| format!("{v} {k}")).collect();
    s.push_str(&format!("{}\n", counts.join(", ")));
    s
}
