//! Shell words: quoting a word so `sh` reads it back unchanged (for messages, recorded
//! commands and Dockerfile `RUN` lines).

/// `word` as one shell word: unchanged when it holds only safe characters, else in single
/// quotes (a single quote inside written `'\''`).
pub fn quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./-_{}^~".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Words joined into one command line.
pub fn join(words: &[String]) -> String {
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(quote("pytest-cov"), "pytest-cov");
        assert_eq!(quote("{env}/venv/bin/python"), "{env}/venv/bin/python");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("pyyaml>=6"), "'pyyaml>=6'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(join(&["pip".into(), "install".into(), "x[test]".into()]), "pip install 'x[test]'");
    }
}
