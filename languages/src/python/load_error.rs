//! The definitions a Python error message names, for the load repair of `carve tasks`:
//! when the masked state fails to import a module or to run a pass-to-pass test because a
//! deleted definition is missing, the message says which one. CPython's wording (3.8–3.13):
//!
//! - `NameError: name 'x' is not defined` (also `... Did you mean: 'y'?`)
//! - `ImportError: cannot import name 'x' from 'pkg.mod' (/path/mod.py)`
//! - `AttributeError: module 'pkg.mod' has no attribute 'x'`
//! - `AttributeError: type object 'C' has no attribute 'x'`, `'C' object has no attribute 'x'`
//! - `TypeError: Can't instantiate abstract class C with abstract method x` (`methods x, y`;
//!   3.12: `without an implementation for abstract method 'x'`, `methods 'x', 'y'`)
//! - `TypeError: C() takes no arguments`: `object.__init__` was reached, so the `__init__`
//!   of `C` or of a base class of it is gone
//!
//! - a protocol the object's class no longer has, because a special method of it went:
//!   `'C' object is not callable` (`__call__`; also a validator's "must be callable (got …
//!   that is a <class 'm.C'>)", attrs' `is_callable`), `is not iterable` (`__iter__`),
//!   `object of type 'C' has no len()` (`__len__`), `is not subscriptable` (`__getitem__`),
//!   `does not support item assignment` (`__setitem__`), `doesn't support item deletion`
//!   (`__delitem__`), `does not support the context manager protocol` (`__enter__`,
//!   `__exit__`; the asynchronous one: `__aenter__`, `__aexit__`), `unhashable type: 'C'`
//!   (`__hash__`), `'<' not supported between instances of 'C' and 'D'` (`__lt__` …),
//!   `unsupported operand type(s) for +: 'C' and 'D'` (`__add__` of `C`, `__radd__` of `D`).
//!   `functools.total_ordering`'s "must define at least one ordering operation" names the
//!   four ordering methods of no particular class.
//!   A class that lost such a method is not an error at once: `callable(x)` is merely false,
//!   and the project checks it somewhere else (attrs' `deep_iterable` at import time).
//!
//! The message may carry a prefix (`could not collect tests/test_a.py: NameError: …`).

use crate::interface::NamedInError;

/// The definitions `message` names; empty when it is none of the errors above.
pub fn load_error_names(message: &str) -> Vec<NamedInError> {
    let mut out = Vec::new();
    let named = |name: &str, owner: Option<&str>| NamedInError {
        name: name.to_string(),
        owner: owner.map(|o| o.rsplit('.').next().unwrap_or(o).to_string()),
    };
    if let Some(name) = quoted_after(message, "name '").filter(|_| message.contains("is not defined")) {
        out.push(named(name, None));
    }
    if let Some(name) = quoted_after(message, "cannot import name '") {
        out.push(named(name, quoted_after(message, "' from '")));
    }
    if let Some(name) = quoted_after(message, "has no attribute '") {
        let owner =
            quoted_after(message, "module '").or_else(|| quoted_after(message, "type object '")).or_else(|| {
                // `'C' object has no attribute 'x'`
                let at = message.find("' object has no attribute")?;
                let start = message[..at].rfind('\'')? + 1;
                Some(&message[start..at])
            });
        out.push(named(name, owner));
    }
    if let Some(at) = message.find("Can't instantiate abstract class ") {
        let rest = &message[at + "Can't instantiate abstract class ".len()..];
        let class = rest.split_whitespace().next().unwrap_or("");
        if let Some(m) = rest.find("abstract method") {
            let list = rest[m + "abstract method".len()..].trim_start_matches('s');
            for name in list.split(',').map(|n| n.trim().trim_matches(['\'', '"', '.', ' '])) {
                if is_identifier(name) {
                    out.push(named(name, Some(class)));
                }
            }
        }
    }
    if let Some(at) = message.find("() takes no arguments") {
        let class = message[..at].rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')).next();
        if let Some(class) = class.filter(|c| !c.is_empty()) {
            out.push(named("__init__", Some(class)));
        }
    }
    protocol_names(message, &mut |name, owner| out.push(named(name, Some(owner).filter(|o| !o.is_empty()))));
    out.retain(|n| is_identifier(&n.name));
    out.sort();
    out.dedup();
    out
}

/// The special methods a protocol error (see the module doc) says the class `owner` lacks,
/// each passed to `found(name, owner)`.
fn protocol_names(message: &str, found: &mut dyn FnMut(&str, &str)) {
    const OBJECT: [(&str, &[&str]); 7] = [
        ("' object is not callable", &["__call__"]),
        ("' object is not iterable", &["__iter__"]),
        ("' object is not subscriptable", &["__getitem__"]),
        ("' object does not support item assignment", &["__setitem__"]),
        ("' object doesn't support item deletion", &["__delitem__"]),
        ("' object does not support the context manager protocol", &["__enter__", "__exit__"]),
        ("' object does not support the asynchronous context manager protocol", &["__aenter__", "__aexit__"]),
    ];
    for (suffix, methods) in OBJECT {
        if let Some(class) = quoted_before(message, suffix) {
            methods.iter().for_each(|m| found(m, class));
        }
    }
    if let Some(class) = quoted_after(message, "object of type '").filter(|_| message.contains("' has no len()")) {
        found("__len__", class);
    }
    if let Some(class) = quoted_after(message, "unhashable type: '") {
        found("__hash__", class);
    }
    // `functools.total_ordering` on a class that lost its ordering methods (attrs'
    // `VersionInfo`); the message names no class.
    if message.contains("must define at least one ordering operation") {
        for method in ["__lt__", "__le__", "__gt__", "__ge__"] {
            found(method, "");
        }
    }
    if message.contains("must be callable")
        && let Some(class) = quoted_after(message, "that is a <class '")
    {
        found("__call__", class);
    }
    const COMPARE: [(&str, &str); 4] = [("'<'", "__lt__"), ("'<='", "__le__"), ("'>'", "__gt__"), ("'>='", "__ge__")];
    for (op, method) in COMPARE {
        let prefix = format!("{op} not supported between instances of '");
        if let Some(class) = quoted_after(message, &prefix) {
            found(method, class);
        }
    }
    const OPERANDS: [(&str, &str); 13] = [
        ("+", "add"),
        ("-", "sub"),
        ("*", "mul"),
        ("/", "truediv"),
        ("//", "floordiv"),
        ("%", "mod"),
        ("** or pow()", "pow"),
        ("@", "matmul"),
        ("&", "and"),
        ("|", "or"),
        ("^", "xor"),
        ("<<", "lshift"),
        (">>", "rshift"),
    ];
    for (op, name) in OPERANDS {
        let prefix = format!("unsupported operand type(s) for {op}: '");
        let Some(left) = quoted_after(message, &prefix) else { continue };
        found(&format!("__{name}__"), left);
        let rest = &message[message.find(&prefix).unwrap_or(0) + prefix.len() + left.len()..];
        if let Some(right) = quoted_after(rest, " and '") {
            found(&format!("__r{name}__"), right);
        }
    }
}

/// The quoted word just before `suffix` (which starts with the closing quote).
fn quoted_before<'m>(message: &'m str, suffix: &str) -> Option<&'m str> {
    let at = message.find(suffix)?;
    let start = message[..at].rfind('\'')? + 1;
    Some(&message[start..at])
}

/// The text between `prefix` (ending in a quote) and the next `'`.
fn quoted_after<'m>(message: &'m str, prefix: &str) -> Option<&'m str> {
    let start = message.find(prefix)? + prefix.len();
    let len = message[start..].find('\'')?;
    Some(&message[start..start + len])
}

fn is_identifier(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(message: &str) -> Vec<(String, Option<String>)> {
        load_error_names(message).into_iter().map(|n| (n.name, n.owner)).collect()
    }

    fn one(name: &str, owner: Option<&str>) -> Vec<(String, Option<String>)> {
        vec![(name.to_string(), owner.map(String::from))]
    }

    #[test]
    fn name_and_import_errors_name_the_missing_definition() {
        assert_eq!(
            names("could not collect tests/test_curried.py: NameError: name 'exceptions' is not defined"),
            one("exceptions", None)
        );
        assert_eq!(names("NameError: name 'merge' is not defined. Did you mean: 'merged'?"), one("merge", None));
        assert_eq!(
            names("ImportError: cannot import name 'slugify' from 'slugify.slugify' (/x/slugify/slugify.py)"),
            one("slugify", Some("slugify"))
        );
    }

    #[test]
    fn attribute_errors_name_the_attribute_and_where_it_was_looked_up() {
        assert_eq!(
            names("AttributeError: module 'toolz.curried' has no attribute 'merge'"),
            one("merge", Some("curried"))
        );
        assert_eq!(
            names("AttributeError: type object 'Counter' has no attribute 'ranked'"),
            one("ranked", Some("Counter"))
        );
        assert_eq!(names("AttributeError: 'Counter' object has no attribute 'ranked'"), one("ranked", Some("Counter")));
    }

    #[test]
    fn abstract_instantiation_names_each_missing_method_of_the_class() {
        assert_eq!(
            names("TypeError: Can't instantiate abstract class Loud with abstract method __call__"),
            one("__call__", Some("Loud"))
        );
        let two = names("TypeError: Can't instantiate abstract class Loud with abstract methods speak, volume");
        assert_eq!(two, [("speak", "Loud"), ("volume", "Loud")].map(|(n, o)| (n.into(), Some(o.into()))).to_vec());
        // Python 3.12's wording.
        assert_eq!(
            names(
                "TypeError: Can't instantiate abstract class Loud without an implementation for abstract method 'speak'"
            ),
            one("speak", Some("Loud"))
        );
    }

    /// attrs' `validators.py` builds `deep_iterable(…, iterable_validator=instance_of(tuple))`
    /// when it is imported; with `_InstanceOfValidator.__call__` masked the instance is no
    /// longer callable and the import fails, naming the class only.
    #[test]
    fn a_lost_protocol_names_the_special_method_of_the_class() {
        assert_eq!(
            names(
                "attr.exceptions.NotCallableError: 'iterable_validator' must be callable (got <instance_of validator \
                 for type <class 'tuple'>> that is a <class 'attr.validators._InstanceOfValidator'>)."
            ),
            one("__call__", Some("_InstanceOfValidator"))
        );
        assert_eq!(names("TypeError: 'Loud' object is not callable"), one("__call__", Some("Loud")));
        assert_eq!(names("TypeError: 'Bag' object is not iterable"), one("__iter__", Some("Bag")));
        assert_eq!(names("TypeError: object of type 'Bag' has no len()"), one("__len__", Some("Bag")));
        assert_eq!(names("TypeError: unhashable type: 'Key'"), one("__hash__", Some("Key")));
        assert_eq!(
            names("TypeError: 'GCToggler' object does not support the context manager protocol"),
            vec![("__enter__".into(), Some("GCToggler".into())), ("__exit__".into(), Some("GCToggler".into()))]
        );
        assert_eq!(
            names("TypeError: '<' not supported between instances of 'Version' and 'Version'"),
            one("__lt__", Some("Version"))
        );
        assert_eq!(
            names("TypeError: unsupported operand type(s) for +: 'Money' and 'int'"),
            vec![("__add__".into(), Some("Money".into())), ("__radd__".into(), Some("int".into()))]
        );
        assert_eq!(
            names("ValueError: must define at least one ordering operation: < > <= >="),
            ["__ge__", "__gt__", "__le__", "__lt__"].map(|m| (m.to_string(), None)).to_vec()
        );
        // Nothing is named where the message names no class.
        assert_eq!(names("AssertionError: 'x' must be callable"), vec![]);
    }

    /// cachetools' `_condition_info.Descriptor(...)` once its base's `__init__` was masked:
    /// the message names the class, the missing `__init__` is its own or a base's.
    #[test]
    fn a_class_that_takes_no_arguments_names_its_init() {
        assert_eq!(
            names("could not collect tests/test_classmethod.py: TypeError: Descriptor() takes no arguments"),
            one("__init__", Some("Descriptor"))
        );
        assert_eq!(names("TypeError: pkg.Box() takes no arguments"), one("__init__", Some("Box")));
    }

    #[test]
    fn other_failures_name_nothing() {
        assert!(names("AssertionError: assert 1 == 2").is_empty());
        assert!(names("ValueError: invalid literal for int() with base 10: 'x'").is_empty());
    }
}
