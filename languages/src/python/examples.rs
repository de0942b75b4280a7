//! Literal examples in Python test code, for problem statements: `assert f(args) == value`
//! (either side, `==` or `is`), `self.assertEqual(f(args), value)`, and
//! `with pytest.raises(Error, match="…"): f(args)`, where every argument is a literal (or a
//! call with literal arguments, as in `Money(5).add(3)`) and the value is a literal; plus
//! the `UPPER_CASE` names the code uses. Only code inside the given byte ranges counts.

use std::collections::BTreeSet;

use crate::syntax::{TestExample, TestFacts, text};

const LITERALS: &[&str] = &["string", "concatenated_string", "integer", "float", "true", "false", "none"];
const CONTAINERS: &[&str] = &["list", "tuple", "set", "dictionary", "pair", "parenthesized_expression"];

fn is_literal(n: tree_sitter::Node) -> bool {
    let k = n.kind();
    if LITERALS.contains(&k) {
        // f-strings are not literal values.
        return !(k == "string" && has_kind(n, "interpolation"));
    }
    if k == "unary_operator" {
        return n.named_child(0).is_some_and(is_literal);
    }
    if CONTAINERS.contains(&k) {
        let mut c = n.walk();
        return n.named_children(&mut c).all(|ch| ch.kind() == "comment" || is_literal(ch) || is_example_call(ch));
    }
    false
}

fn has_kind(n: tree_sitter::Node, kind: &str) -> bool {
    let mut c = n.walk();
    n.named_children(&mut c).any(|ch| ch.kind() == kind || has_kind(ch, kind))
}

/// A call whose callee is a name, or an attribute of a name or of such a call, and whose
/// arguments are literals or such calls.
fn is_example_call(n: tree_sitter::Node) -> bool {
    if n.kind() != "call" {
        return false;
    }
    let callee_ok = n.child_by_field_name("function").is_some_and(callee);
    let args_ok = n.child_by_field_name("arguments").is_some_and(|a| {
        if a.kind() != "argument_list" {
            return false;
        }
        let mut c = a.walk();
        a.named_children(&mut c).all(|arg| match arg.kind() {
            "keyword_argument" => arg.child_by_field_name("value").is_some_and(|v| is_literal(v) || is_example_call(v)),
            "comment" => true,
            _ => is_literal(arg) || is_example_call(arg),
        })
    });
    callee_ok && args_ok
}

/// An example call, or an attribute of one (`Money(5).add(3).cents`).
fn is_example_expr(n: tree_sitter::Node) -> bool {
    is_example_call(n) || (n.kind() == "attribute" && n.child_by_field_name("object").is_some_and(is_example_expr))
}

fn callee(f: tree_sitter::Node) -> bool {
    match f.kind() {
        "identifier" => true,
        "attribute" => f.child_by_field_name("object").is_some_and(|o| callee(o) || is_example_call(o)),
        _ => false,
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn example(call: tree_sitter::Node, result: Option<tree_sitter::Node>, src: &str) -> TestExample {
    TestExample {
        call: one_line(text(call, src)),
        result: result.map(|r| one_line(text(r, src))),
        raises: None,
        message: None,
    }
}

/// `a == b` / `a is b` with a call on one side and a literal on the other.
fn comparison(n: tree_sitter::Node, src: &str) -> Option<TestExample> {
    if n.kind() != "comparison_operator" || n.named_child_count() != 2 {
        return None;
    }
    let op = (0..n.child_count()).filter_map(|i| n.child(i)).find(|c| !c.is_named())?;
    if !matches!(op.kind(), "==" | "is") {
        return None;
    }
    let (a, b) = (n.named_child(0)?, n.named_child(1)?);
    // `actual == expected`: the expected value is a literal or a constructor call with
    // literal arguments (`Decimal("8.99")`).
    if is_example_expr(a) && (is_literal(b) || is_example_call(b)) {
        Some(example(a, Some(b), src))
    } else if is_example_expr(b) && is_literal(a) {
        Some(example(b, Some(a), src))
    } else {
        None
    }
}

/// `pytest.raises(Error, match="…")` (or `raises(…)`): the error and the message.
fn raises(item: tree_sitter::Node, src: &str) -> Option<(String, Option<String>)> {
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
                let name = a.child_by_field_name("name").map(|n| text(n, src));
                if name == Some("match") {
                    message = a.child_by_field_name("value").filter(|v| is_literal(*v)).map(|v| one_line(text(v, src)));
                }
            }
            _ if error.is_none() => error = Some(one_line(text(a, src))),
            _ => {}
        }
    }
    Some((error?, message))
}

fn first_call_statement(block: tree_sitter::Node) -> Option<tree_sitter::Node> {
    let mut c = block.walk();
    let found = block.named_children(&mut c).find_map(|st| {
        let e = if st.kind() == "expression_statement" { st.named_child(0)? } else { return None };
        let e = if e.kind() == "assignment" { e.child_by_field_name("right")? } else { e };
        is_example_call(e).then_some(e)
    });
    found
}

fn visit(
    n: tree_sitter::Node,
    src: &str,
    ranges: &[(usize, usize)],
    facts: &mut TestFacts,
    consts: &mut BTreeSet<String>,
) {
    let inside = ranges.iter().any(|(s, e)| n.start_byte() >= *s && n.end_byte() <= *e);
    let overlaps = ranges.iter().any(|(s, e)| n.start_byte() < *e && n.end_byte() > *s);
    if !overlaps {
        return;
    }
    if inside {
        match n.kind() {
            "assert_statement" => {
                if let Some(ex) = n.named_child(0).and_then(|e| comparison(e, src)) {
                    facts.examples.push(ex);
                }
            }
            "call" => {
                let f = n.child_by_field_name("function").map(|f| text(f, src)).unwrap_or("");
                if f.ends_with(".assertEqual") || f.ends_with(".assertEquals") {
                    let args = n.child_by_field_name("arguments");
                    let (a, b) = (args.and_then(|a| a.named_child(0)), args.and_then(|a| a.named_child(1)));
                    if let (Some(a), Some(b)) = (a, b) {
                        if is_example_expr(a) && is_literal(b) {
                            facts.examples.push(example(a, Some(b), src));
                        }
                    }
                }
            }
            "with_statement" => {
                let clause =
                    (0..n.named_child_count()).filter_map(|i| n.named_child(i)).find(|c| c.kind() == "with_clause");
                let body = n.child_by_field_name("body");
                if let (Some(clause), Some(body)) = (clause, body) {
                    let mut c = clause.walk();
                    let r = clause.named_children(&mut c).find_map(|item| raises(item, src));
                    if let (Some((error, message)), Some(call)) = (r, first_call_statement(body)) {
                        facts.examples.push(TestExample {
                            call: one_line(text(call, src)),
                            result: None,
                            raises: Some(error),
                            message,
                        });
                    }
                }
            }
            "identifier" => {
                let t = text(n, src);
                let upper = t.len() >= 3
                    && t.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                    && t.chars().next().is_some_and(|c| c.is_ascii_uppercase());
                if upper {
                    consts.insert(t.to_string());
                }
            }
            _ => {}
        }
    }
    let mut c = n.walk();
    for ch in n.children(&mut c) {
        visit(ch, src, ranges, facts, consts);
    }
}

/// The examples and constants of `source` inside `ranges` (byte offsets).
pub fn test_facts(source: &str, ranges: &[(usize, usize)]) -> TestFacts {
    let mut parser = tree_sitter::Parser::new();
    if parser.set_language(&tree_sitter_python::LANGUAGE.into()).is_err() {
        return TestFacts::default();
    }
    let Some(tree) = parser.parse(source, None) else { return TestFacts::default() };
    let mut facts = TestFacts::default();
    let mut consts = BTreeSet::new();
    visit(tree.root_node(), source, ranges, &mut facts, &mut consts);
    let mut seen = BTreeSet::new();
    facts.examples.retain(|e| seen.insert(e.clone()));
    facts.constants = consts.into_iter().collect();
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
                r#"Money(5).add(3).cents -> Some("800") None None"#,
            ]
        );
        assert_eq!(facts.constants, vec!["MAX_LENGTH".to_string()]);
    }
}
