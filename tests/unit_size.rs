//! Units stay small (issue 25): no product function over [`MAX_FN_LINES`] lines and no
//! product file over [`MAX_FILE_LINES`] product lines. Product code is every `.rs` file under
//! the `src/` of a workspace member, except `tests/`, `examples/` and `benches/` directories,
//! files named `tests.rs` or `testutil.rs`, and `#[cfg(test)]` items (an inline module, or the
//! file of a `#[cfg(test)] mod name;`), whose lines do not count either.
//!
//! The scan is a small lexer, not a parser: it blanks comments, strings, raw strings and
//! character literals, then matches braces. A function's length runs from the line of its
//! `fn` to the line of its closing brace.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The longest a product function may be, in lines.
const MAX_FN_LINES: usize = 100;
/// The most product lines a file may have.
const MAX_FILE_LINES: usize = 800;

/// One function of a scanned source.
#[derive(Debug, PartialEq, Eq)]
struct Function {
    name: String,
    /// Line of its `fn` (1-based).
    line: usize,
    /// Lines from its `fn` to its closing brace, both included.
    lines: usize,
}

/// What one source holds, test code left out.
#[derive(Debug, Default)]
struct Scan {
    /// Every function with a body outside test code, nested ones too.
    functions: Vec<Function>,
    /// Lines outside `#[cfg(test)]` items.
    product_lines: usize,
    /// Names of `#[cfg(test)] mod name;` declarations: their files are test code.
    test_modules: Vec<String>,
}

/// Whether `c` can continue an identifier.
fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `src` with every comment, string, raw string and character literal replaced by spaces
/// (line breaks kept), so that braces and keywords left are code.
fn blank(src: &str) -> String {
    let chars: Vec<char> = src.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    // Appends `chars[from..to]` blanked.
    let blank_into = |out: &mut String, from: usize, to: usize| {
        out.extend(chars[from..to.min(chars.len())].iter().map(|&c| if c == '\n' { '\n' } else { ' ' }));
    };
    while i < chars.len() {
        let c = chars[i];
        let after_ident = i > 0 && is_ident(chars[i - 1]);
        let end = if c == '/' && at(i + 1) == '/' {
            (i..chars.len()).find(|&j| chars[j] == '\n').unwrap_or(chars.len())
        } else if c == '/' && at(i + 1) == '*' {
            block_comment_end(&chars, i)
        } else if let Some(end) = (!after_ident).then(|| raw_string_end(&chars, i)).flatten() {
            end
        } else if c == '"' {
            string_end(&chars, i)
        } else if c == '\'' && at(i + 1) == '\\' {
            (i + 3..chars.len()).find(|&j| chars[j] == '\'').map_or(chars.len(), |j| j + 1)
        } else if c == '\'' && at(i + 1) != '\n' && at(i + 2) == '\'' {
            i + 3
        } else {
            out.push(c);
            i += 1;
            continue;
        };
        blank_into(&mut out, i, end);
        i = end;
    }
    out
}

/// The end (exclusive) of the block comment opening at `start`; block comments nest.
fn block_comment_end(chars: &[char], start: usize) -> usize {
    let (mut depth, mut i) = (0usize, start);
    while i < chars.len() {
        if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
            depth += 1;
            i += 2;
        } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    chars.len()
}

/// The end (exclusive) of the string whose opening quote is at `start` (escapes skipped).
fn string_end(chars: &[char], start: usize) -> usize {
    let mut i = start + 1;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    chars.len()
}

/// The end (exclusive) of the raw string (`r"…"`, `r#"…"#`, `br`, `cr`) starting at
/// `start`, or `None` when none starts there.
fn raw_string_end(chars: &[char], start: usize) -> Option<usize> {
    let mut i = start;
    if matches!(chars[i], 'b' | 'c') {
        i += 1;
    }
    if chars.get(i) != Some(&'r') {
        return None;
    }
    i += 1;
    let hashes = chars[i..].iter().take_while(|&&c| c == '#').count();
    i += hashes;
    if chars.get(i) != Some(&'"') {
        return None;
    }
    let close: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
    Some((i + 1..chars.len()).find(|&j| chars[j..].starts_with(&close)).map_or(chars.len(), |j| j + close.len()))
}

/// A `#[cfg(test)]` item being skipped: where it started and at which brace depth.
struct TestItem {
    line: usize,
    depth: usize,
    /// Its `{` has been seen: it ends with the matching `}`.
    in_block: bool,
    /// The words before its body or `;` (`mod name` gives the module's name).
    words: Vec<String>,
}

/// Scans one Rust source: its functions and product lines, without `#[cfg(test)]` items.
fn scan(src: &str) -> Scan {
    let code: Vec<char> = blank(src).chars().collect();
    let total_lines = src.lines().count();
    let mut test_lines = vec![false; total_lines + 2];
    let mut out = Scan::default();
    let (mut line, mut depth, mut parens) = (1usize, 0usize, 0usize);
    // A `fn name` whose body (`{`) or end (`;`) is still ahead: name, line, parens, depth.
    let mut pending_fn: Option<(String, usize, usize, usize)> = None;
    // Functions whose body is open: name, line, brace depth before the body.
    let mut open_fns: Vec<(String, usize, usize)> = Vec::new();
    let mut test: Option<TestItem> = None;
    let mut i = 0;
    while i < code.len() {
        let c = code[i];
        match c {
            '\n' => line += 1,
            '#' => {
                if let Some((end, inner, text)) = attribute_at(&code, i) {
                    if text == "cfg(test)" && test.is_none() {
                        if inner && depth == 0 {
                            return Scan::default();
                        }
                        test = Some(TestItem { line, depth, in_block: false, words: Vec::new() });
                    }
                    line += code[i..end].iter().filter(|&&c| c == '\n').count();
                    i = end;
                    continue;
                }
            }
            c if is_ident(c) && (i == 0 || !is_ident(code[i - 1])) => {
                let end = (i..code.len()).find(|&j| !is_ident(code[j])).unwrap_or(code.len());
                let word: String = code[i..end].iter().collect();
                match &mut test {
                    Some(t) if !t.in_block => t.words.push(word),
                    Some(_) => {}
                    None if word == "fn" => {
                        let start = (end..code.len()).find(|&j| !code[j].is_whitespace()).unwrap_or(code.len());
                        if code.get(start).is_some_and(|&c| c.is_alphabetic() || c == '_') {
                            let name_end = (start..code.len()).find(|&j| !is_ident(code[j])).unwrap_or(code.len());
                            pending_fn = Some((code[start..name_end].iter().collect(), line, parens, depth));
                        }
                    }
                    None => {}
                }
                i = end;
                continue;
            }
            '(' | '[' => parens += 1,
            ')' | ']' => parens = parens.saturating_sub(1),
            '{' => {
                match &mut test {
                    Some(t) if !t.in_block && parens == 0 => t.in_block = true,
                    Some(_) => {}
                    None => {
                        if let Some((name, at, _, _)) = pending_fn.take_if(|(_, _, p, d)| *p == parens && *d == depth) {
                            open_fns.push((name, at, depth));
                        }
                    }
                }
                depth += 1;
            }
            '}' => {
                depth = depth.saturating_sub(1);
                if let Some(t) = test.take_if(|t| (t.in_block && depth == t.depth) || depth < t.depth) {
                    test_lines[t.line..=line].iter_mut().for_each(|l| *l = true);
                } else if test.is_none() && open_fns.last().is_some_and(|(_, _, d)| *d == depth) {
                    let (name, at, _) = open_fns.pop().expect("checked");
                    out.functions.push(Function { name, line: at, lines: line - at + 1 });
                }
            }
            ';' => {
                if let Some(t) = test.take_if(|t| !t.in_block && parens == 0 && depth == t.depth) {
                    test_lines[t.line..=line].iter_mut().for_each(|l| *l = true);
                    if let Some(p) = t.words.iter().position(|w| w == "mod") {
                        out.test_modules.extend(t.words.get(p + 1).cloned());
                    }
                }
                pending_fn.take_if(|(_, _, p, d)| *p == parens && *d == depth);
            }
            _ => {}
        }
        i += 1;
    }
    out.functions.sort_by_key(|f| f.line);
    out.product_lines = (1..=total_lines).filter(|&l| !test_lines[l]).count();
    out
}

/// The attribute (`#[…]` or `#![…]`) at `i` of blanked code: where it ends (exclusive),
/// whether it is an inner one, and its text without whitespace.
fn attribute_at(code: &[char], i: usize) -> Option<(usize, bool, String)> {
    let mut j = i + 1;
    let inner = code.get(j) == Some(&'!');
    if inner {
        j += 1;
    }
    while code.get(j).is_some_and(|c| c.is_whitespace()) {
        j += 1;
    }
    if code.get(j) != Some(&'[') {
        return None;
    }
    let mut brackets = 0usize;
    for (k, &c) in code.iter().enumerate().skip(j) {
        match c {
            '[' => brackets += 1,
            ']' => {
                brackets -= 1;
                if brackets == 0 {
                    let text = code[j + 1..k].iter().filter(|c| !c.is_whitespace()).collect();
                    return Some((k + 1, inner, text));
                }
            }
            _ => {}
        }
    }
    None
}

/// Every `.rs` file under `dir`, without `tests/`, `examples/` and `benches/` directories
/// and files named `tests.rs` or `testutil.rs`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
        let path = entry.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
        if path.is_dir() {
            if !matches!(name.as_str(), "tests" | "examples" | "benches") {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" && name != "testutil.rs" {
            out.push(path);
        }
    }
}

/// The `src/` directories of the workspace's members (from the root `Cargo.toml`).
fn member_sources(root: &Path) -> Vec<PathBuf> {
    let manifest: toml::Table = toml::from_str(&std::fs::read_to_string(root.join("Cargo.toml")).unwrap()).unwrap();
    let members = manifest["workspace"]["members"].as_array().expect("workspace.members");
    members.iter().map(|m| root.join(m.as_str().unwrap()).join("src")).filter(|d| d.is_dir()).collect()
}

/// The directory holding the submodule files of the module in `file`.
fn module_dir(file: &Path) -> PathBuf {
    let parent = file.parent().unwrap();
    match file.file_name().and_then(|n| n.to_str()) {
        Some("mod.rs" | "lib.rs" | "main.rs") => parent.to_path_buf(),
        _ => parent.join(file.file_stem().unwrap()),
    }
}

/// What breaks the rule in the product files under `sources`: one line per function or file
/// too long, `path:line: …` relative to `root`.
fn oversized(root: &Path, sources: &[PathBuf]) -> (usize, Vec<String>) {
    let mut files = Vec::new();
    for dir in sources {
        rust_files(dir, &mut files);
    }
    files.sort();
    let scans: Vec<(PathBuf, Scan)> =
        files.into_iter().map(|p| (p.clone(), scan(&std::fs::read_to_string(&p).unwrap()))).collect();
    // The files (and the directories of their submodules) of `#[cfg(test)] mod name;`.
    let test_paths: BTreeSet<PathBuf> =
        scans.iter().flat_map(|(p, s)| s.test_modules.iter().map(move |m| module_dir(p).join(m))).collect();
    let is_test = |p: &Path| test_paths.iter().any(|t| p == t.with_extension("rs") || p.starts_with(t));
    let mut found = Vec::new();
    let mut scanned = 0;
    for (path, s) in scans.iter().filter(|(p, _)| !is_test(p)) {
        scanned += 1;
        let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        if s.product_lines > MAX_FILE_LINES {
            found.push(format!("{rel}: {} product lines (at most {MAX_FILE_LINES})", s.product_lines));
        }
        for f in s.functions.iter().filter(|f| f.lines > MAX_FN_LINES) {
            found.push(format!("{rel}:{}: fn {} is {} lines (at most {MAX_FN_LINES})", f.line, f.name, f.lines));
        }
    }
    (scanned, found)
}

#[test]
fn no_product_function_or_file_is_too_long() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sources = member_sources(root);
    assert!(sources.len() >= 10, "found only {} member src/ directories", sources.len());
    let (scanned, found) = oversized(root, &sources);
    assert!(scanned > 100, "scanned only {scanned} files");
    assert!(
        found.is_empty(),
        "units too long (split them into well-named functions or modules; issue 25):\n{}",
        found.join("\n")
    );
}

/// A function `name` whose body has `body` lines, so `body + 2` lines in all.
fn function(name: &str, body: usize) -> String {
    let mut s = format!("fn {name}() {{\n");
    for n in 0..body {
        s.push_str(&format!("    let _x{n} = {n};\n"));
    }
    s.push_str("}\n");
    s
}

/// `(name, line, lines)` of every function the scan found.
fn found(src: &str) -> Vec<(String, usize, usize)> {
    scan(src).functions.into_iter().map(|f| (f.name, f.line, f.lines)).collect()
}

#[test]
fn a_101_line_function_is_too_long_and_a_100_line_one_is_not() {
    let src = format!("{}\n{}", function("long", 99), function("just_fits", 98));
    let functions = found(&src);
    assert_eq!(functions, [("long".to_string(), 1, 101), ("just_fits".to_string(), 103, 100)]);
    let long: Vec<_> = functions.iter().filter(|f| f.2 > MAX_FN_LINES).map(|f| f.0.as_str()).collect();
    assert_eq!(long, ["long"]);
}

#[test]
fn braces_in_strings_comments_and_chars_do_not_count() {
    let src = r####"
pub(crate) async fn tricky<'a>(x: &'a str) -> char {
    let _ = "}}} \" {";
    let _ = r#"}"# ;
    let _ = br##"{ "# }"##;
    // } a comment
    /* } /* nested { */ } */
    let _ = b'}';
    let _ = ('\'', '"', "// not a comment {");
    let _ = '\u{7d}';
    '{'
}
fn after() {}
trait T {
    fn declared(&self);
    fn provided(&self) -> [u8; 2] { [0; 2] }
}
"####;
    let functions = found(src);
    assert_eq!(
        functions,
        [("tricky".to_string(), 2, 11), ("after".to_string(), 13, 1), ("provided".to_string(), 16, 1),]
    );
}

#[test]
fn a_cfg_test_module_is_skipped() {
    let src = format!(
        "fn product() {{}}\n#[cfg(test)]\nmod tests {{\n{}}}\n#[cfg(test)]\nmod more;\nfn last() {{}}\n",
        function("long_test", 200)
    );
    let s = scan(&src);
    let names: Vec<&str> = s.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["product", "last"]);
    assert_eq!(s.test_modules, ["more"]);
    assert_eq!(s.product_lines, 2);
}

#[test]
fn the_file_of_a_cfg_test_module_declaration_is_test_code() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("runner")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod runner;\n").unwrap();
    std::fs::write(src.join("runner.rs"), "#[cfg(test)]\npub(crate) mod support;\n").unwrap();
    std::fs::write(src.join("runner/support.rs"), function("long_support", 150)).unwrap();
    std::fs::write(src.join("big.rs"), function("long_product", 150)).unwrap();
    let (scanned, found) = oversized(dir.path(), &[src]);
    assert_eq!(scanned, 3);
    assert_eq!(found, ["src/big.rs:1: fn long_product is 152 lines (at most 100)"]);
}
