//! The INI dialect of `setup.cfg`, `tox.ini` and `pytest.ini` (configparser's): `[section]`,
//! `key = value` or `key: value`, continuation lines indented, `#`/`;` comment lines.

/// `(section, key, value)` in file order; a multi-line value keeps its lines joined by `\n`
/// (the first, possibly empty, line included only when not empty).
pub fn parse(text: &str) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    let mut section = String::new();
    for raw in text.lines() {
        let line = raw.trim_end();
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        if indented && let Some(last) = out.last_mut().filter(|l| l.0 == section) {
            if !last.2.is_empty() {
                last.2.push('\n');
            }
            last.2.push_str(trimmed);
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            section = name.trim().to_string();
            continue;
        }
        let split = trimmed.find(['=', ':']);
        if let Some(i) = split {
            let key = trimmed[..i].trim().to_string();
            let value = trimmed[i + 1..].trim().to_string();
            out.push((section.clone(), key, value));
        }
    }
    out
}

/// The value of `key` in `section`.
pub fn get<'a>(entries: &'a [(String, String, String)], section: &str, key: &str) -> Option<&'a str> {
    entries.iter().find(|(s, k, _)| s == section && k == key).map(|(_, _, v)| v.as_str())
}

/// The keys and values of `section`.
pub fn section<'a>(entries: &'a [(String, String, String)], name: &str) -> Vec<(&'a str, &'a str)> {
    entries.iter().filter(|(s, _, _)| s == name).map(|(_, k, v)| (k.as_str(), v.as_str())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_keys_and_continuations() {
        let text = "[metadata]\nname = x\n\n[options.extras_require]\ntest =\n    pytest>=7\n    pyyaml\n# c\ndev: black\n[tool:pytest]\naddopts = --cov=x\n  -ra\n";
        let e = parse(text);
        assert_eq!(get(&e, "metadata", "name"), Some("x"));
        assert_eq!(get(&e, "options.extras_require", "test"), Some("pytest>=7\npyyaml"));
        assert_eq!(get(&e, "options.extras_require", "dev"), Some("black"));
        assert_eq!(get(&e, "tool:pytest", "addopts"), Some("--cov=x\n-ra"));
        assert_eq!(section(&e, "options.extras_require").len(), 2);
    }
}
