//! Version ranges as projects write them for their interpreter or toolchain: PEP 440
//! specifiers (`>=3.9,<4`, `~=3.10`, `!=3.9.*`, `==3.11.*`), Poetry's and npm's (`^3.8`,
//! `~3.9`, `>=18 <21`, `18 || 20`, `20.x`), enough to tell whether a version present here
//! satisfies `requires-python` or `engines.node`.

use super::version_cmp;
use std::cmp::Ordering;

/// Whether `version` (`3.11.7`) satisfies `spec`; an empty spec allows every version, and a
/// clause carve cannot read is ignored (never a reason to refuse an interpreter).
pub fn satisfies(version: &str, spec: &str) -> bool {
    let spec = spec.trim().replace(".x", "").replace(".X", "");
    let spec = spec.as_str();
    if spec.is_empty() || spec == "*" || spec == "x" {
        return true;
    }
    spec.split("||").any(|alternative| {
        alternative.split(',').flat_map(|c| split_poetry_spaces(c.trim())).all(|clause| clause_holds(version, clause))
    })
}

/// Poetry allows `>=3.8 <4` (space instead of comma).
fn split_poetry_spaces(clause: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = clause.as_bytes();
    for i in 1..bytes.len() {
        if bytes[i - 1] == b' ' && matches!(bytes[i], b'<' | b'>' | b'=' | b'!' | b'~' | b'^') {
            out.push(clause[start..i].trim());
            start = i;
        }
    }
    out.push(clause[start..].trim());
    out.into_iter().filter(|c| !c.is_empty()).collect()
}

fn clause_holds(version: &str, clause: &str) -> bool {
    let ops = ["===", "==", "!=", "~=", ">=", "<=", ">", "<", "^", "~", "="];
    let Some(op) = ops.iter().find(|op| clause.starts_with(**op)) else {
        // A bare version (Poetry): exactly that release line.
        return clause.chars().next().is_some_and(|c| c.is_ascii_digit()) && prefix_match(version, clause);
    };
    let target = clause[op.len()..].trim();
    if target.is_empty() || !target.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return true;
    }
    let wildcard = target.ends_with(".*");
    let base = target.trim_end_matches(".*");
    let cmp = version_cmp(version, base);
    match *op {
        "==" | "===" | "=" if wildcard => prefix_match(version, base),
        "==" | "===" | "=" => cmp == Ordering::Equal,
        "!=" if wildcard => !prefix_match(version, base),
        "!=" => cmp != Ordering::Equal,
        ">=" => cmp != Ordering::Less,
        "<=" => cmp != Ordering::Greater,
        ">" => cmp == Ordering::Greater,
        "<" => cmp == Ordering::Less,
        // ~=3.9 : >=3.9, ==3.*; ~=3.9.1 : >=3.9.1, ==3.9.*
        "~=" => {
            let parts: Vec<&str> = base.split('.').collect();
            cmp != Ordering::Less && (parts.len() < 2 || prefix_match(version, &parts[..parts.len() - 1].join(".")))
        }
        // ^3.8 : >=3.8,<4 ; ^0.3 : >=0.3,<0.4
        "^" => {
            let parts: Vec<&str> = base.split('.').collect();
            let keep = parts.iter().position(|p| *p != "0").map_or(parts.len(), |i| i + 1);
            cmp != Ordering::Less && prefix_match(version, &parts[..keep.min(parts.len())].join("."))
        }
        // ~3.9 : >=3.9,<3.10 ; ~3 : >=3,<4
        "~" => {
            let parts: Vec<&str> = base.split('.').collect();
            let keep = if parts.len() >= 2 { 2 } else { 1 };
            cmp != Ordering::Less && prefix_match(version, &parts[..keep].join("."))
        }
        _ => true,
    }
}

/// `version` starts with the release segments of `prefix` (`3.11.7` in `3.11`).
fn prefix_match(version: &str, prefix: &str) -> bool {
    let v: Vec<&str> = version.split('.').collect();
    let p: Vec<&str> = prefix.split('.').collect();
    p.len() <= v.len() && p.iter().zip(&v).all(|(a, b)| a.parse::<u64>().ok() == b.parse::<u64>().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pep440_and_poetry_ranges() {
        assert!(satisfies("3.11.7", ">=3.8"));
        assert!(!satisfies("3.11.7", ">=3.12"));
        assert!(satisfies("3.11.7", ">=3.9,<4"));
        assert!(!satisfies("3.11.7", ">=3.9, <3.11"));
        assert!(satisfies("3.11.7", "~=3.10"));
        assert!(!satisfies("3.9.1", "~=3.10"));
        assert!(!satisfies("3.11.7", "!=3.11.*"));
        assert!(satisfies("3.11.7", "==3.11.*"));
        assert!(satisfies("3.11.7", "^3.8"));
        assert!(!satisfies("4.0.0", "^3.8"));
        assert!(satisfies("3.9.18", "~3.9"));
        assert!(!satisfies("3.10.1", "~3.9"));
        assert!(satisfies("3.11.7", ">=3.8 <4"));
        assert!(satisfies("2.7.18", ">=2.7,!=3.0.*,!=3.1.*"));
        assert!(satisfies("3.11.7", ">=2.7, !=3.0.*, !=3.1.*, !=3.2.*, !=3.3.*"));
        assert!(satisfies("3.11.7", ""));
        assert!(satisfies("3.11.7", "3.11"));
        assert!(!satisfies("3.10.1", "3.11"));
        assert!(satisfies("3.11.7", ">=3.12 || >=3.11"));
        // npm's engines.
        assert!(satisfies("20.20.2", "20.x"));
        assert!(satisfies("20.20.2", "18 || 20"));
        assert!(!satisfies("20.20.2", ">=22.12.0"));
        assert!(satisfies("20.20.2", ">= 0.10"));
    }
}
