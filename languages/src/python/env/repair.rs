//! What a failed verification run of a Python environment says to install: a module that
//! could not be imported → the distribution that provides it (a table for the names that
//! differ, `yaml` → PyYAML); a fixture, option, marker or ini key pytest did not know → its
//! plugin; async tests pytest could not run → pytest-asyncio. A missing program (`git`,
//! a compiler) cannot be installed from PyPI: it is reported as unresolved.

use std::collections::BTreeSet;

use super::plugins::{FIXTURES, INI_KEYS, MARKERS, OPTIONS};
use super::requirements::normalize;

/// Import names whose distribution is named otherwise.
pub const MODULES: &[(&str, &str)] = &[
    ("yaml", "PyYAML"),
    ("PIL", "Pillow"),
    ("sklearn", "scikit-learn"),
    ("skimage", "scikit-image"),
    ("cv2", "opencv-python"),
    ("bs4", "beautifulsoup4"),
    ("dateutil", "python-dateutil"),
    ("dotenv", "python-dotenv"),
    ("jose", "python-jose"),
    ("jwt", "PyJWT"),
    ("magic", "python-magic"),
    ("multipart", "python-multipart"),
    ("docx", "python-docx"),
    ("pptx", "python-pptx"),
    ("slugify", "python-slugify"),
    ("Crypto", "pycryptodome"),
    ("Cryptodome", "pycryptodomex"),
    ("OpenSSL", "pyOpenSSL"),
    ("nacl", "PyNaCl"),
    ("git", "GitPython"),
    ("github", "PyGithub"),
    ("serial", "pyserial"),
    ("usb", "pyusb"),
    ("zmq", "pyzmq"),
    ("attr", "attrs"),
    ("google.protobuf", "protobuf"),
    ("pkg_resources", "setuptools"),
    ("setuptools", "setuptools"),
    ("_pytest", "pytest"),
    ("mpl_toolkits", "matplotlib"),
    ("wx", "wxPython"),
    ("gi", "PyGObject"),
    ("MySQLdb", "mysqlclient"),
    ("psycopg2", "psycopg2-binary"),
    ("sqlalchemy", "SQLAlchemy"),
    ("markdown", "Markdown"),
    ("jinja2", "Jinja2"),
    ("lxml", "lxml"),
    ("win32api", "pywin32"),
    ("Levenshtein", "python-Levenshtein"),
    ("editdistance", "editdistance"),
    ("tomli_w", "tomli-w"),
    ("typing_extensions", "typing-extensions"),
    ("importlib_metadata", "importlib-metadata"),
    ("importlib_resources", "importlib-resources"),
    ("pytest_asyncio", "pytest-asyncio"),
    ("pytest_mock", "pytest-mock"),
    ("freezegun", "freezegun"),
    ("mock", "mock"),
    ("fitz", "PyMuPDF"),
    ("Bio", "biopython"),
    ("ruamel", "ruamel.yaml"),
    ("websocket", "websocket-client"),
    ("socks", "PySocks"),
    ("dns", "dnspython"),
    ("ldap", "python-ldap"),
    ("xdist", "pytest-xdist"),
    ("hamcrest", "PyHamcrest"),
    ("memcache", "python-memcached"),
    ("sentry_sdk", "sentry-sdk"),
    ("google.cloud", "google-cloud-core"),
];

/// Modules of the standard library that Debian ships apart (not installable from PyPI).
const SYSTEM_MODULES: &[(&str, &str)] = &[
    ("tkinter", "python3-tk"),
    ("_tkinter", "python3-tk"),
    ("distutils", "python3-distutils (or a `setuptools` install on 3.12+)"),
    ("lib2to3", "python3-lib2to3"),
    ("_sqlite3", "libsqlite3-dev, then rebuild the interpreter"),
    ("_ctypes", "libffi-dev, then rebuild the interpreter"),
    ("_lzma", "liblzma-dev, then rebuild the interpreter"),
    ("_bz2", "libbz2-dev, then rebuild the interpreter"),
];

/// What one failure message asks for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Need {
    /// A distribution, and the message part that named it.
    Dist { dist: String, why: String },
    /// Something PyPI cannot provide.
    Unresolved(String),
}

/// The distribution for import name `module` (dotted), or `None` when the module is the
/// repository's own (`own` holds its top-level names) or a system part.
pub fn distribution(module: &str, own: &[String]) -> Result<Option<String>, String> {
    let top = module.split('.').next().unwrap_or(module);
    if own.iter().any(|o| o == top) {
        return Ok(None);
    }
    if let Some((_, pkg)) = SYSTEM_MODULES.iter().find(|(m, _)| *m == top) {
        return Err(format!(
            "module `{top}` is part of CPython that this interpreter was built without: install {pkg}"
        ));
    }
    let two: String = module.split('.').take(2).collect::<Vec<_>>().join(".");
    if let Some((_, d)) = MODULES.iter().find(|(m, _)| *m == two).or_else(|| MODULES.iter().find(|(m, _)| *m == top)) {
        return Ok(Some(d.to_string()));
    }
    Ok(Some(top.replace('_', "-")))
}

/// Everything `text` (a failure message or output) asks for.
pub fn needs(text: &str, own: &[String]) -> Vec<Need> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let line = line.trim();
        for (pattern, quote) in [("No module named '", '\''), ("No module named \"", '"'), ("No module named ", ' ')] {
            if let Some(rest) = line.split(pattern).nth(1) {
                let module: String =
                    rest.chars().take_while(|c| *c != quote && !c.is_whitespace() && *c != '\'').collect();
                let module = module.trim_end_matches(['.', ',', ';']);
                if module.is_empty() {
                    continue;
                }
                match distribution(module, own) {
                    Ok(Some(d)) => {
                        out.insert(Need::Dist { dist: d, why: format!("No module named '{module}'") });
                    }
                    Ok(None) => {}
                    Err(e) => {
                        out.insert(Need::Unresolved(e));
                    }
                }
                break;
            }
        }
        if let Some(name) = between(line, "fixture '", "' not found")
            && let Some((_, d)) = FIXTURES.iter().find(|(f, _)| *f == name)
        {
            out.insert(Need::Dist { dist: d.to_string(), why: format!("fixture '{name}' not found") });
        }
        if let Some(name) = between(line, "'", "' not found in `markers` configuration option")
            && let Some((_, d)) = MARKERS.iter().find(|(m, _)| *m == name)
        {
            out.insert(Need::Dist { dist: d.to_string(), why: format!("marker '{name}' unknown") });
        }
        if let Some(rest) = line.split("unrecognized arguments: ").nth(1) {
            for w in rest.split_whitespace() {
                if let Some((opt, d)) = OPTIONS.iter().find(|(o, _)| {
                    !o.contains(' ')
                        && (w == *o || w.starts_with(&format!("{o}=")) || (o.len() > 2 && w.starts_with(o)))
                }) {
                    out.insert(Need::Dist { dist: d.to_string(), why: format!("unrecognized argument {opt}") });
                }
            }
        }
        if let Some(key) = line.split("Unknown config option: ").nth(1).map(str::trim)
            && let Some((_, d)) = INI_KEYS.iter().find(|(k, _)| *k == key)
        {
            out.insert(Need::Dist { dist: d.to_string(), why: format!("unknown config option {key}") });
        }
        if line.contains("async def functions are not natively supported") {
            out.insert(Need::Dist {
                dist: "pytest-asyncio".into(),
                why: "async def test functions are not natively supported".into(),
            });
        }
        if let Some(prog) =
            between(line, "No such file or directory: '", "'").filter(|p| !p.contains('/') && !p.contains('.'))
        {
            out.insert(Need::Unresolved(format!(
                "the tests run the program `{prog}`, which is not installed (install it on this machine)"
            )));
        }
        if let Some(prog) = line
            .strip_suffix(": command not found")
            .or_else(|| line.strip_suffix(": not found"))
            .and_then(|l| l.rsplit(": ").next())
            && !prog.contains(' ')
            && !prog.is_empty()
        {
            out.insert(Need::Unresolved(format!(
                "the tests run the program `{prog}`, which is not installed (install it on this machine)"
            )));
        }
    }
    out.into_iter().collect()
}

fn between<'a>(line: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = line.find(start)? + start.len();
    let to = line[from..].find(end)? + from;
    Some(&line[from..to]).filter(|s| !s.is_empty() && !s.contains(' '))
}

/// Whether `dist` was already asked for by one of `done`'s words (a repair is never repeated).
pub fn already(dist: &str, done_words: &BTreeSet<String>) -> bool {
    done_words.contains(&normalize(dist))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dists(text: &str) -> Vec<String> {
        needs(text, &["mypkg".to_string()])
            .into_iter()
            .filter_map(|n| match n {
                Need::Dist { dist, .. } => Some(dist),
                Need::Unresolved(_) => None,
            })
            .collect()
    }

    #[test]
    fn modules_map_to_their_distributions() {
        assert_eq!(dists("E   ModuleNotFoundError: No module named 'yaml'"), vec!["PyYAML"]);
        assert_eq!(dists("ModuleNotFoundError: No module named 'google.protobuf'"), vec!["protobuf"]);
        assert_eq!(dists("ImportError: No module named foo_bar"), vec!["foo-bar"]);
        assert_eq!(
            dists("ModuleNotFoundError: No module named 'mypkg.sub'"),
            Vec::<String>::new(),
            "the repository's own"
        );
        let n = needs("No module named '_tkinter'", &[]);
        assert!(matches!(&n[0], Need::Unresolved(m) if m.contains("python3-tk")), "{n:?}");
    }

    #[test]
    fn fixtures_options_markers_and_keys_map_to_plugins() {
        assert_eq!(dists("E       fixture 'mocker' not found"), vec!["pytest-mock"]);
        assert_eq!(dists("pytest: error: unrecognized arguments: --cov=src --cov-report=xml"), vec!["pytest-cov"]);
        assert_eq!(dists("'asyncio' not found in `markers` configuration option"), vec!["pytest-asyncio"]);
        assert_eq!(dists("PytestConfigWarning: Unknown config option: timeout"), vec!["pytest-timeout"]);
        assert_eq!(dists("async def functions are not natively supported."), vec!["pytest-asyncio"]);
        assert_eq!(dists("fixture 'tmp_path_x' not found"), Vec::<String>::new(), "unknown fixtures name nothing");
    }

    #[test]
    fn missing_programs_are_unresolved() {
        let n = needs("FileNotFoundError: [Errno 2] No such file or directory: 'git'", &[]);
        assert!(matches!(&n[..], [Need::Unresolved(m)] if m.contains("`git`")), "{n:?}");
        let n = needs("sh: 1: protoc: not found", &[]);
        assert!(matches!(&n[..], [Need::Unresolved(m)] if m.contains("`protoc`")), "{n:?}");
    }
}
