//! Literal examples in Python test code, for problem statements: `assert f(args) == value`
//! (either side, `==` or `is`), `self.assertEqual(f(args), value)`, and
//! `with pytest.raises(Error, match="…"): f(args)`, where every argument is a literal (or a
//! call with literal arguments, as in `Money(5).add(3)`) and the value is a literal or such
//! a call; plus the `UPPER_CASE` names the code uses. Names assigned such a value earlier in
//! the same function (`txt = "a b"; r = slugify(txt)`) stand for it. Only code inside the
//! given byte ranges counts. `pytest.mark.parametrize` values are not substituted yet.

use std::collections::{BTreeSet, HashMap};

use crate::syntax::{TestExample, TestFacts, text};

const LITERALS: &[&str] = &["string", "concatenated_string", "integer", "float", "true", "false", "none"];
const CONTAINERS: &[&str] = &["list", "tuple", "set", "dictionary", "pair", "parenthesized_expression"];

/// A value a name was assigned: its text, and whether it is a call (an example) or a literal.
#[derive(Clone)]
struct Bound {
    text: String,
    is_call: bool,
}

type Env = HashMap<String, Bound>;

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text of a literal value (f-strings are not literal), names replaced by their values.
fn literal(n: tree_sitter::Node, src: &str, env: &Env) -> Option<String> {
    let k = n.kind();
    if LITERALS.contains(&k) {
        return (!(k == "string" && has_kind(n, "interpolation"))).then(|| one_line(text(n, src)));
    }
    if k == "identifier" {
        return env.get(text(n, src)).filter(|b| !b.is_call).map(|b| b.text.clone());
    }
    if k == "unary_operator" {
        let inner = n.named_child(0)?;
        literal(inner, src, env)?;
        return Some(one_line(text(n, src)));
    }
    if CONTAINERS.contains(&k) {
        let mut c = n.walk();
        let ok = n.named_children(&mut c).all(|ch| ch.kind() == "comment" || value(ch, src, env).is_some());
        return ok.then(|| one_line(text(n, src)));
    }
    None
}

fn has_kind(n: tree_sitter::Node, kind: &str) -> bool {
    let mut c = n.walk();
    n.named_children(&mut c).any(|ch| ch.kind() == kind || has_kind(ch, kind))
}

/// A literal or an example expression.
fn value(n: tree_sitter::Node, src: &str, env: &Env) -> Option<String> {
    literal(n, src, env).or_else(|| example_expr(n, src, env))
}

/// A call whose callee is a name, or an attribute of a name or of such a call, whose
/// arguments are values; or an attribute of one (`Money(5).add(3).cents`); or a name bound
/// to one. Rendered with bound names replaced.
fn example_expr(n: tree_sitter::Node, src: &str, env: &Env) -> Option<String> {
    match n.kind() {
        "identifier" => env.get(text(n, src)).filter(|b| b.is_call).map(|b| b.text.clone()),
        "attribute" => {
            let obj = n.child_by_field_name("object")?;
            let attr = text(n.child_by_field_name("attribute")?, src);
            Some(format!("{}.{attr}", example_expr(obj, src, env)?))
        }
        "call" => {
            let callee = callee(n.child_by_field_name("function")?, src, env)?;
            let args = n.child_by_field_name("arguments").filter(|a| a.kind() == "argument_list")?;
            let mut c = args.walk();
            let mut parts = Vec::new();
            for arg in args.named_children(&mut c) {
                match arg.kind() {
                    "comment" => {}
                    "keyword_argument" => {
                        let name = text(arg.child_by_field_name("name")?, src);
                        parts.push(format!("{name}={}", value(arg.child_by_field_name("value")?, src, env)?));
                    }
                    _ => parts.push(value(arg, src, env)?),
                }
            }
            Some(format!("{callee}({})", parts.join(", ")))
        }
        _ => None,
    }
}

fn callee(f: tree_sitter::Node, src: &str, env: &Env) -> Option<String> {
    match f.kind() {
        "identifier" => Some(env.get(text(f, src)).map(|b| b.text.clone()).unwrap_or_else(|| text(f, src).to_string())),
        "attribute" => {
            let obj = f.child_by_field_name("object")?;
            let attr = text(f.child_by_field_name("attribute")?, src);
            let o = callee(obj, src, env).or_else(|| example_expr(obj, src, env))?;
            Some(format!("{o}.{attr}"))
        }
        _ => None,
    }
}

/// `actual == expected` (or `is`): the expected value is a literal or a constructor call
/// with literal arguments (`Decimal("8.99")`).
fn comparison(n: tree_sitter::Node, src: &str, env: &Env) -> Option<TestExample> {
    if n.kind() != "comparison_operator" || n.named_child_count() != 2 {
        return None;
    }
    let op = (0..n.child_count()).filter_map(|i| n.child(i)).find(|c| !c.is_named())?;
    if !matches!(op.kind(), "==" | "is") {
        return None;
    }
    pair(n.named_child(0)?, n.named_child(1)?, src, env)
}

fn pair(a: tree_sitter::Node, b: tree_sitter::Node, src: &str, env: &Env) -> Option<TestExample> {
    let gives = |call: String, result: String| TestExample { call, result: Some(result), raises: None, message: None };
    if let (Some(call), Some(result)) = (example_expr(a, src, env), value(b, src, env)) {
        return Some(gives(call, result));
    }
    match (literal(a, src, env), example_expr(b, src, env)) {
        (Some(result), Some(call)) => Some(gives(call, result)),
        _ => None,
    }
}

/// `pytest.raises(Error, match="…")` (or `raises(…)`): the error and the message.
fn raises(item: tree_sitter::Node, src: &str, env: &Env) -> Option<(String, Option<String>)> {
    let call = if item.kind() == "call" { item } else { item.named_child(0).filter(|c| c.kind() == "call")? };
    let f = text(call.child_by_field_name("function")?, src);
    if f != "pytest.raises" && f != "raises" {
        return None;
    }
    let args = call.child_by_field_name("arguments")?;
    let mut c = args.walk();
    let mut error = None;
    let mut message = None;
    for a in args.named_children(&mut c) {
        match a.kind() {
            "keyword_argument" => {
                if a.child_by_field_name("name").map(|n| text(n, src)) == Some("match") {
                    message = a.child_by_field_name("value").and_then(|v| literal(v, src, env));
                }
            }
            _ if error.is_none() => error = Some(one_line(text(a, src))),
            _ => {}
        }
    }
    Some((error?, message))
}

fn first_call_statement(block: tree_sitter::Node, src: &str, env: &Env) -> Option<String> {
    let mut c = block.walk();
    let found = block.named_children(&mut c).find_map(|st| {
        let e = if st.kind() == "expression_statement" { st.named_child(0)? } else { return None };
        let e = if e.kind() == "assignment" { e.child_by_field_name("right")? } else { e };
        if e.kind() == "call" { example_expr(e, src, env) } else { None }
    });
    found
}

struct Walk<'a> {
    src: &'a str,
    ranges: &'a [(usize, usize)],
    facts: TestFacts,
    consts: BTreeSet<String>,
    env: Env,
}

impl Walk<'_> {
    fn visit(&mut self, n: tree_sitter::Node) {
        let (src, ranges) = (self.src, self.ranges);
        let inside = ranges.iter().any(|(s, e)| n.start_byte() >= *s && n.end_byte() <= *e);
        if !ranges.iter().any(|(s, e)| n.start_byte() < *e && n.end_byte() > *s) {
            return;
        }
        if n.kind() == "function_definition" {
            self.env.clear();
        }
        if inside {
            match n.kind() {
                "assert_statement" => {
                    if let Some(ex) = n.named_child(0).and_then(|e| comparison(e, src, &self.env)) {
                        self.facts.examples.push(ex);
                    }
                }
                "assignment" => {
                    if let (Some(left), Some(right)) = (n.child_by_field_name("left"), n.child_by_field_name("right")) {
                        if left.kind() == "identifier" {
                            let name = text(left, src).to_string();
                            let bound = match literal(right, src, &self.env) {
                                Some(t) => Some(Bound { text: t, is_call: false }),
                                None => example_expr(right, src, &self.env).map(|t| Bound { text: t, is_call: true }),
                            };
                            match bound {
                                Some(b) => self.env.insert(name, b),
                                None => self.env.remove(&name),
                            };
                        }
                    }
                }
                "call" => {
                    let f = n.child_by_field_name("function").map(|f| text(f, src)).unwrap_or("");
                    if f.ends_with(".assertEqual") || f.ends_with(".assertEquals") {
                        let args = n.child_by_field_name("arguments");
                        let (a, b) = (args.and_then(|a| a.named_child(0)), args.and_then(|a| a.named_child(1)));
                        if let Some(ex) = a.zip(b).and_then(|(a, b)| pair(a, b, src, &self.env)) {
                            self.facts.examples.push(ex);
                        }
                    }
                }
                "with_statement" => {
                    let clause =
                        (0..n.named_child_count()).filter_map(|i| n.named_child(i)).find(|c| c.kind() == "with_clause");
                    if let (Some(clause), Some(body)) = (clause, n.child_by_field_name("body")) {
                        let mut c = clause.walk();
                        let r = clause.named_children(&mut c).find_map(|item| raises(item, src, &self.env));
                        if let (Some((error, message)), Some(call)) = (r, first_call_statement(body, src, &self.env)) {
                            self.facts.examples.push(TestExample { call, result: None, raises: Some(error), message });
                        }
                    }
                }
                "identifier" => {
                    let t = text(n, src);
                    let upper = t.len() >= 3
                        && t.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                        && t.chars().next().is_some_and(|c| c.is_ascii_uppercase());
                    if upper {
                        self.consts.insert(t.to_string());
                    }
                }
                _ => {}
            }
        }
        let mut c = n.walk();
        let children: Vec<tree_sitter::Node> = n.children(&mut c).collect();
        for ch in children {
            self.visit(ch);
        }
    }
}

/// The examples and constants of `source` inside `ranges` (byte offsets).
pub fn test_facts(source: &str, ranges: &[(usize, usize)]) -> TestFacts {
    let mut parser = tree_sitter::Parser::new();
    if parser.set_language(&tree_sitter_python::LANGUAGE.into()).is_err() {
        return TestFacts::default();
    }
    let Some(tree) = parser.parse(source, None) else { return TestFacts::default() };
    let mut walk = Walk { src: source, ranges, facts: TestFacts::default(), consts: BTreeSet::new(), env: Env::new() };
    walk.visit(tree.root_node());
    let mut facts = walk.facts;
    let mut seen = BTreeSet::new();
    facts.examples.retain(|e| seen.insert(e.clone()));
    facts.constants = walk.consts.into_iter().collect();
    facts
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"
import pytest
from slugs import slugify, MAX_LENGTH

def test_basic():
    assert slugify("Hello World") == "hello-world"
    assert "a-b" == slugify("a b", sep="-")
    assert slugify(name) == "x"          # not literal: skipped
    assert len(slugify("x" * MAX_LENGTH)) <= MAX_LENGTH
    assert total(Decimal("9.99")) == Decimal("8.99")

def test_errors():
    with pytest.raises(ValueError, match="empty text"):
        slugify("")

class TestMoney(unittest.TestCase):
    def test_add(self):
        self.assertEqual(Money(5).add(3), Money(8))
        self.assertEqual(Money(5).add(3).cents, 800)

    def test_bound(self):
        txt = "This is a test ---"
        r = slugify(txt)
        self.assertEqual(r, "this-is-a-test")
        txt = other(1)
        r = slugify(txt, sep=SEP)
        self.assertEqual(r, "no")

def test_other():
    assert slugify("outside") == "outside"
"#;

    #[test]
    fn literal_examples_errors_and_constants_inside_the_ranges() {
        let end = SRC.find("def test_other").unwrap();
        let facts = test_facts(SRC, &[(SRC.find("def test_basic").unwrap(), end)]);
        let shown: Vec<String> = facts
            .examples
            .iter()
            .map(|e| format!("{} -> {:?} {:?} {:?}", e.call, e.result, e.raises, e.message))
            .collect();
        assert_eq!(
            shown,
            vec![
                r#"slugify("Hello World") -> Some("\"hello-world\"") None None"#,
                r#"slugify("a b", sep="-") -> Some("\"a-b\"") None None"#,
                r#"total(Decimal("9.99")) -> Some("Decimal(\"8.99\")") None None"#,
                r#"slugify("") -> None Some("ValueError") Some("\"empty text\"")"#,
                r#"Money(5).add(3) -> Some("Money(8)") None None"#,
                r#"Money(5).add(3).cents -> Some("800") None None"#,
                r#"slugify("This is a test ---") -> Some("\"this-is-a-test\"") None None"#,
            ]
        );
        assert_eq!(facts.constants, vec!["MAX_LENGTH".to_string(), "SEP".to_string()]);
    }
}
