//! Panics in `go test` output: which function panicked, so that a masked state whose P2P
//! test hits a stub (`panic("not implemented")`) says which definition it was.
//!
//! A test that panics prints `panic: MESSAGE [recovered, …]`, then `goroutine N
//! [running]:` and one frame per two lines, innermost first: the function
//! (`github.com/google/uuid.setNodeInterface(...)`, `pkg.(*T).M(…)`, `pkg.T.M(…)`,
//! `pkg.F[...](…)`, closures `pkg.F.func1(…)`) and its `\tFILE:LINE +0xOFF`. The testing
//! package's own frames (`testing.tRunner.func1.2`) and the runtime's `panic(…)` come
//! first; the frame after `panic(…)` is the function that panicked. [`PanicReader`] follows
//! a test's output lines and keeps that frame; [`PanicSite::message`] renders it into the
//! test's failure message (`panic: not implemented [recovered, repanicked] in
//! github.com/google/uuid.setNodeInterface (node.go:40)`), and [`named_in_panic`] reads
//! the definition's name and owner back from such a message (the owner is the method's
//! type, else the file's stem, as load repair matches owners).
//!
//! Not wired yet: the runtime repair that would keep the named definition (a P2P test of
//! google/uuid hits the stub of the lazily called `setNodeInterface`) needs the
//! pipeline's load-error hook (`LanguageSupport::load_error_names`, py-repair's branch);
//! with it, Go's method is `named_in_panic` on the message.

/// The function that panicked, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PanicSite {
    /// `panic: …` as printed, without the `panic: ` prefix.
    pub value: String,
    /// The frame's function as printed, without its arguments.
    pub function: String,
    /// The base name of its file and the line (`node.go`, 40).
    pub file: String,
    pub line: u32,
}

impl PanicSite {
    /// The failure message of the test that panicked here.
    pub fn message(&self) -> String {
        format!("panic: {} in {} ({}:{})", self.value, self.function, self.file, self.line)
    }
}

/// Follows one test's output lines.
#[derive(Debug, Default)]
pub struct PanicReader {
    value: Option<String>,
    after_runtime_panic: bool,
    function: Option<String>,
    pub site: Option<PanicSite>,
}

impl PanicReader {
    pub fn feed(&mut self, line: &str) {
        if self.site.is_some() {
            return;
        }
        let line = line.trim_end();
        if let Some(v) = line.strip_prefix("panic: ") {
            if self.value.is_none() {
                self.value = Some(v.to_string());
            }
            return;
        }
        if self.value.is_none() {
            return;
        }
        if let Some(function) = self.function.take() {
            // `\t/path/file.go:40 +0x13a`
            let at = line.trim_start();
            let at = at.split(" +0x").next().unwrap_or(at);
            if let Some((path, no)) = at.rsplit_once(':')
                && let Ok(line_no) = no.parse::<u32>()
            {
                let file = path.rsplit('/').next().unwrap_or(path).to_string();
                let value = self.value.clone().unwrap_or_default();
                self.site = Some(PanicSite { value, function, file, line: line_no });
            }
            return;
        }
        if line.starts_with(char::is_whitespace) || line.is_empty() || line.starts_with("goroutine ") {
            return;
        }
        let function = frame_function(line);
        if self.after_runtime_panic {
            self.function = Some(function.to_string());
        } else if function == "panic" {
            self.after_runtime_panic = true;
        }
    }
}

/// `pkg.F(0x1, …)` → `pkg.F`; `pkg.(*T).M(…)` → `pkg.(*T).M`.
fn frame_function(line: &str) -> &str {
    let line = line.trim();
    match line.strip_suffix(')').and_then(|l| l.rfind('(').map(|i| &l[..i])) {
        Some(f) if !f.is_empty() && !f.ends_with('.') && !f.ends_with("(*") => f,
        _ => line,
    }
}

/// The definition a panic message of [`PanicSite::message`]'s form names: `(name,
/// owner)`, the owner being a method's type or else the stem of the file. Closures
/// (`F.func1`, `F.func1.2`) name the function that holds them; generic instantiations
/// (`F[...]`) the generic function.
pub fn named_in_panic(message: &str) -> Option<(String, Option<String>)> {
    let rest = message.strip_prefix("panic: ")?;
    let at = rest.rfind(" in ")?;
    let (function, place) = rest[at + 4..].split_once(" (")?;
    let file = place.split(':').next()?;
    let stem = file.strip_suffix(".go").unwrap_or(file);
    // Drop the package path: everything up to the last `/`, then the package name.
    let after_path = function.rsplit_once('/').map_or(function, |(_, f)| f);
    let (_, symbol) = after_path.split_once('.')?;
    let symbol = symbol.replace("[...]", "");
    let mut parts: Vec<String> = Vec::new();
    for part in symbol.split('.') {
        let part = part.split('[').next().unwrap_or(part);
        let closure = part.starts_with("func") && part[4..].chars().all(|c| c.is_ascii_digit());
        if closure || part.chars().all(|c| c.is_ascii_digit()) || part.is_empty() {
            break;
        }
        parts.push(part.trim_start_matches("(*").trim_end_matches(')').to_string());
    }
    match parts.as_slice() {
        [name] => Some((name.clone(), Some(stem.to_string()))),
        [ty, method, ..] => Some((method.clone(), Some(ty.clone()))),
        [] => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(output: &str) -> Option<PanicSite> {
        let mut r = PanicReader::default();
        for l in output.lines() {
            r.feed(l);
        }
        r.site
    }

    /// google/uuid, masked with `setNodeInterface` stubbed: the P2P `TestNewV6WithTime`
    /// is the first to call it once the F2P tests are gone (captured with go1.26.8).
    #[test]
    fn a_lazily_called_stub_is_named_by_its_frame() {
        let s = site(include_str!("testdata/uuid-lazy-stub.txt")).expect("a panic site");
        assert_eq!(s.value, "not implemented [recovered, repanicked]");
        assert_eq!(
            (s.function.as_str(), s.file.as_str(), s.line),
            ("github.com/google/uuid.setNodeInterface", "node.go", 40)
        );
        let m = s.message();
        assert_eq!(
            m,
            "panic: not implemented [recovered, repanicked] in github.com/google/uuid.setNodeInterface (node.go:40)"
        );
        assert_eq!(named_in_panic(&m), Some(("setNodeInterface".to_string(), Some("node".to_string()))));
    }

    /// A pointer-receiver method reached through the standard library (`encoding/json`).
    #[test]
    fn a_method_stub_is_named_with_its_type() {
        let s = site(include_str!("testdata/uuid-method-stub.txt")).expect("a panic site");
        assert_eq!(s.function, "github.com/google/uuid.(*UUID).UnmarshalText");
        assert_eq!((s.file.as_str(), s.line), ("marshal.go", 18));
        assert_eq!(named_in_panic(&s.message()), Some(("UnmarshalText".to_string(), Some("UUID".to_string()))));
    }

    #[test]
    fn value_receivers_closures_and_generics_name_their_definition() {
        let name = |f: &str| named_in_panic(&format!("panic: x in {f} (a.go:3)"));
        let own = |n: &str, o: &str| Some((n.to_string(), Some(o.to_string())));
        assert_eq!(name("example.com/m/geo.Circle.Area"), own("Area", "Circle"));
        assert_eq!(name("example.com/m/geo.Sum[...]"), own("Sum", "a"));
        assert_eq!(name("example.com/m/geo.(*Stack[...]).Push"), own("Push", "Stack"));
        assert_eq!(name("example.com/m.Walk.func1.2"), own("Walk", "a"));
        assert_eq!(named_in_panic("panic: boom"), None);
        assert_eq!(named_in_panic("a_test.go:9: want 5"), None);
    }

    #[test]
    fn output_without_a_panic_has_no_site() {
        assert_eq!(site("    a_test.go:9: want 5\n"), None);
        assert_eq!(site("panic: boom\n\ngoroutine 1 [running]:\n"), None);
    }
}
