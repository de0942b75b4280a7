//! Which format a carve output file is, by its name (and, for `validation.json`, by whether
//! it is a chain gate's), and its bytes as carve's writer serializes it again.

use carve_formats::audit::Audit;
use carve_formats::chain::ChainFile;
use carve_formats::contract::Contract;
use carve_formats::gate::GateValidation;
use carve_formats::instance::Instance;
use carve_formats::results::{ArcRun, GradeRun};
use carve_formats::validation::Validation;
use carve_formats::{Format, FormatError, from_str, to_pretty};
use std::path::Path;

/// The file's text parsed into its type and written again as carve writes it (pretty JSON
/// and a newline; `tasks.jsonl`: one compact instance per line). `None`: no format of this
/// crate has that file name.
pub fn rewritten(path: &Path, text: &str) -> Option<Result<Vec<u8>, FormatError>> {
    let name = path.file_name()?.to_str()?;
    Some(match name {
        "instance.json" => again::<Instance>(text, path),
        "contract.json" => again::<Contract>(text, path),
        "chain.json" => again::<ChainFile>(text, path),
        "grade.json" => again::<GradeRun>(text, path),
        "run.json" => again::<ArcRun>(text, path),
        "validation.json" if is_gate(text) => again::<GateValidation>(text, path),
        "validation.json" => again::<Validation>(text, path),
        "tasks.jsonl" => jsonl(text, path),
        n if n == "audit.json" || (n.starts_with("audit-") && n.ends_with(".json")) => again::<Audit>(text, path),
        _ => return None,
    })
}

/// A chain gate's `validation.json` has a `gate` field; a task's has none.
fn is_gate(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| v.get("gate").is_some())
}

fn again<T: Format>(text: &str, path: &Path) -> Result<Vec<u8>, FormatError> {
    Ok(to_pretty(&from_str::<T>(text, path)?))
}

fn jsonl(text: &str, path: &Path) -> Result<Vec<u8>, FormatError> {
    let mut out = Vec::new();
    for line in text.lines() {
        let inst: Instance = from_str(line, path)?;
        out.extend(serde_json::to_vec(&inst).expect("an instance serializes"));
        out.push(b'\n');
    }
    Ok(out)
}

/// The first line where `a` and `b` differ, for a failure message.
pub fn first_difference(a: &[u8], b: &[u8]) -> String {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    for (n, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}: {x:?} became {y:?}", n + 1);
        }
    }
    format!("{} lines became {} lines", a.lines().count(), b.lines().count())
}
