//! The later sources of a Python repository's test set: `tox.ini` (`deps`, `extras`),
//! `noxfile.py` (`session.install(...)`), and the CI workflows' `pip install` lines; and the
//! few `setup.py` keywords read without running it.

use std::collections::BTreeSet;
use std::path::Path;

use super::ini;
use super::metadata::{Meta, apply_lines, read_input};
use super::requirements::{self, Line};

/// `[testenv] deps` and `extras` of `tox.ini` (factor-conditional lines `py38: x` and
/// substitutions `{[base]deps}` left out, noted).
pub fn tox(meta: &mut Meta, repo: &Path) {
    let Some(text) = read_input(repo, "tox.ini", meta) else { return };
    let entries = ini::parse(&text);
    let mut read = BTreeSet::new();
    for key in ["deps", "extras"] {
        let Some(value) = ini::get(&entries, "testenv", key) else { continue };
        let source = format!("tox.ini [testenv] {key}");
        for raw in value.lines() {
            let line = raw.replace("{toxinidir}/", "").replace("{toxinidir}", ".");
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            if line.contains('{') || factor_prefix(line) {
                apply_lines(meta, vec![Line::Skipped(line.to_string())], &source);
                continue;
            }
            let lines = if key == "extras" {
                vec![Line::Project { extras: vec![line.to_string()] }]
            } else {
                let words: Vec<&str> = line.split_whitespace().collect();
                if words.len() == 1 || words[0].starts_with('-') {
                    requirements::from_words(repo, &words, &mut read)
                } else {
                    vec![Line::Requirement(line.to_string())]
                }
            };
            apply_lines(meta, lines, &source);
        }
    }
    meta.inputs.extend(read);
}

/// `py38: x`, `!py27,py3: x`: a line only some tox environments use.
fn factor_prefix(line: &str) -> bool {
    line.split_once(':').is_some_and(|(f, _)| {
        !f.is_empty() && f.chars().all(|c| c.is_ascii_alphanumeric() || c == ',' || c == '!' || c == '-' || c == '_')
    }) && !line.contains("://")
}

/// The string arguments of `session.install(...)` calls in `noxfile.py`.
pub fn nox(meta: &mut Meta, repo: &Path) {
    let Some(text) = read_input(repo, "noxfile.py", meta) else { return };
    let mut read = BTreeSet::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("session.install(") {
        rest = &rest[i + "session.install(".len()..];
        let end = rest.find(')').unwrap_or(rest.len());
        let words: Vec<String> = string_literals(&rest[..end]);
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let lines = requirements::from_words(repo, &words, &mut read);
        apply_lines(meta, lines, "noxfile.py session.install");
    }
    meta.inputs.extend(read);
}

/// Tools CI installs to release, lint or drive other tools, not to run the tests: left out of
/// what CI lines contribute (and noted).
const CI_TOOLS: &[&str] = &[
    "pre-commit",
    "twine",
    "build",
    "tox",
    "nox",
    "wheel",
    "mypy",
    "ruff",
    "black",
    "flake8",
    "isort",
    "pylint",
    "sphinx",
    "codecov",
    "coveralls",
    "check-manifest",
    "bump2version",
    "setuptools-scm",
    "virtualenv",
    "uv",
    "poetry",
    "hatch",
    "pdm",
    "pipx",
    "cibuildwheel",
    "maturin",
];

/// The `pip install …` lines of `.github/workflows/*.yml` (and `.gitlab-ci.yml`,
/// `.travis.yml`), in file order.
pub fn workflows(meta: &mut Meta, repo: &Path) {
    let mut read = BTreeSet::new();
    for f in crate::env::ci_files(repo) {
        let Some(text) = read_input(repo, &f, meta) else { continue };
        for line in text.lines() {
            for command in line.split("&&").flat_map(|c| c.split(';')) {
                let words: Vec<&str> = command.split_whitespace().collect();
                let Some(at) = words.windows(2).position(|w| w[0].ends_with("pip") && w[1] == "install") else {
                    continue;
                };
                let args: Vec<&str> =
                    words[at + 2..].iter().copied().take_while(|w| !w.starts_with('$') && *w != "|").collect();
                let lines = requirements::from_words(repo, &args, &mut read)
                    .into_iter()
                    .map(|l| match l {
                        Line::Requirement(r) if CI_TOOLS.contains(&requirements::name(&r).as_str()) => {
                            Line::Skipped(format!("{r} (a release or lint tool)"))
                        }
                        other => other,
                    })
                    .collect();
                apply_lines(
                    meta,
                    lines,
                    &format!("{f}: `{}`", command.trim().trim_start_matches("- ").trim_start_matches("run:").trim()),
                );
            }
        }
    }
    meta.inputs.extend(read);
}

/// Quoted strings of a Python expression, in order.
fn string_literals(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '"' || c == '\'' {
            let rest = &text[i + 1..];
            if let Some(end) = rest.find(c) {
                out.push(rest[..end].to_string());
                for _ in 0..=end {
                    chars.next();
                }
            }
        }
    }
    out
}

/// `setup(name="x")`'s string value for `keyword`.
pub fn setup_py_string(text: &str, keyword: &str) -> Option<String> {
    let at = keyword_at(text, keyword)?;
    let rest = text[at..].trim_start();
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let end = rest[1..].find(quote)?;
    Some(rest[1..1 + end].to_string())
}

/// The strings of `setup(tests_require=[...])`.
pub fn setup_py_list(text: &str, keyword: &str) -> Vec<String> {
    let Some(at) = keyword_at(text, keyword) else { return Vec::new() };
    let rest = text[at..].trim_start();
    if !rest.starts_with('[') {
        return Vec::new();
    }
    let end = rest.find(']').unwrap_or(rest.len());
    string_literals(&rest[..end])
}

/// The keys of `extras_require={...}` written as a dict literal.
pub fn setup_py_extras(text: &str) -> Vec<String> {
    let Some(at) = keyword_at(text, "extras_require") else { return Vec::new() };
    let rest = text[at..].trim_start();
    if !rest.starts_with('{') {
        return Vec::new();
    }
    // Keys: a string literal followed by `:` at depth one.
    let mut keys = Vec::new();
    let mut depth = 0;
    let bytes = rest.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'[' | b'(' => depth += 1,
            b'}' | b']' | b')' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            q @ (b'"' | b'\'') => {
                let end = rest[i + 1..].find(q as char).map_or(bytes.len(), |e| i + 1 + e);
                if depth == 1 && rest[end + 1..].trim_start().starts_with(':') {
                    keys.push(rest[i + 1..end].to_string());
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    keys
}

/// Where `keyword=` (as a keyword argument) ends in `text`.
fn keyword_at(text: &str, keyword: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find(keyword) {
        let start = from + i;
        let before = text[..start].chars().next_back();
        let after = text[start + keyword.len()..].trim_start();
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && after.starts_with('=')
            && !after.starts_with("==")
        {
            let eq = text[start + keyword.len()..].find('=')? + start + keyword.len();
            return Some(eq + 1);
        }
        from = start + keyword.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    use carve_testutil::temp_tree as repo;

    #[test]
    fn tox_deps_and_extras() {
        let d = repo(&[
            (
                "tox.ini",
                "[tox]\nenvlist = py3\n[testenv]\ndeps =\n    pytest\n    py38: importlib_metadata\n    {[base]deps}\n    -r{toxinidir}/req.txt\nextras = yaml\n",
            ),
            ("req.txt", "hypothesis\n"),
        ]);
        let mut m = Meta::default();
        tox(&mut m, d.path());
        let r: Vec<&str> = m.requirements.iter().map(|(r, _)| r.as_str()).collect();
        assert_eq!(r, vec!["pytest", "hypothesis"]);
        assert_eq!(m.extras, vec![("yaml".to_string(), "tox.ini [testenv] extras".to_string())]);
        assert_eq!(m.notes.len(), 3, "{:?}", m.notes);
        assert!(m.inputs.contains("tox.ini") && m.inputs.contains("req.txt"));
    }

    #[test]
    fn nox_sessions_and_ci_lines() {
        let d = repo(&[(
            "noxfile.py",
            "@nox.session\ndef tests(session):\n    session.install('-e', '.[test]')\n    session.install(\"pytest-randomly\", 'freezegun')\n",
        )]);
        let mut m = Meta::default();
        nox(&mut m, d.path());
        assert_eq!(m.extras.iter().map(|(e, _)| e.as_str()).collect::<Vec<_>>(), vec!["test"]);
        assert_eq!(
            m.requirements.iter().map(|(r, _)| r.as_str()).collect::<Vec<_>>(),
            vec!["pytest-randomly", "freezegun"]
        );
        let d = repo(&[(
            ".github/workflows/ci.yml",
            "jobs:\n  t:\n    steps:\n      - run: python -m pip install --upgrade pip && pip install pytest pyyaml\n      - run: pip install -e . twine\n",
        )]);
        let mut m = Meta::default();
        workflows(&mut m, d.path());
        let r: Vec<(&str, &str)> = m.requirements.iter().map(|(r, s)| (r.as_str(), s.as_str())).collect();
        assert_eq!(r[0], ("pytest", ".github/workflows/ci.yml: `pip install pytest pyyaml`"));
        assert_eq!(r[1].0, "pyyaml");
        assert_eq!(m.extras, vec![], "`pip install -e .` names no extras");
        assert_eq!(r.len(), 2, "twine is a release tool: {r:?}");
        assert!(m.notes.iter().any(|n| n.value.contains("twine (a release or lint tool)")), "{:?}", m.notes);
    }

    #[test]
    fn setup_py_keywords() {
        let text = "setup(\n    name='pkg',\n    python_requires=\">=3.8\",\n    tests_require=['pytest', \"mock>=2\"],\n    extras_require={\n        'test': ['pytest'],\n        \"docs\": [\"sphinx\"],\n    },\n)\n";
        assert_eq!(setup_py_string(text, "name").as_deref(), Some("pkg"));
        assert_eq!(setup_py_string(text, "python_requires").as_deref(), Some(">=3.8"));
        assert_eq!(setup_py_list(text, "tests_require"), vec!["pytest", "mock>=2"]);
        assert_eq!(setup_py_extras(text), vec!["test", "docs"]);
        assert!(factor_prefix("py38: x") && !factor_prefix("x>=1"));
    }
}
