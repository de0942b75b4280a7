//! Parents and siblings of the nodes definitions are read from, taken from the walk over the
//! tree instead of searched from the root on every call.

use tree_sitter::Node;

use super::super::queries::Kinds;
use super::FxHashMap;

/// Parents and siblings of the nodes definitions are read from. `Node::parent` and
/// `Node::prev_sibling` search down from the root on every call; the walk knows each
/// node's ancestors, so parents are taken from it (and remembered), and siblings from one
/// list of a parent's children.
pub(super) struct Family<'t> {
    pub(super) kinds: &'static Kinds,
    parents: FxHashMap<usize, Option<Node<'t>>>,
    children: FxHashMap<usize, Vec<Node<'t>>>,
    /// The node the walk is on, and its ancestors (root first).
    pub(super) at: Option<Node<'t>>,
    pub(super) ancestors: Vec<Node<'t>>,
}

impl<'t> Family<'t> {
    pub(super) fn new(kinds: &'static Kinds) -> Family<'t> {
        Family { kinds, parents: FxHashMap::default(), children: FxHashMap::default(), at: None, ancestors: Vec::new() }
    }

    pub(super) fn children_of(&mut self, p: Node<'t>) -> &[Node<'t>] {
        self.children.entry(p.id()).or_insert_with(|| {
            let mut c = p.walk();
            p.children(&mut c).collect()
        })
    }

    /// The parent of `n`: from the walk when `n` is the current node, one of its
    /// ancestors or one of its children, else `Node::parent`.
    pub(super) fn parent(&mut self, n: Node<'t>) -> Option<Node<'t>> {
        if let Some(p) = self.parents.get(&n.id()) {
            return *p;
        }
        let p = match self.at {
            Some(at) if at.id() == n.id() => self.ancestors.last().copied(),
            Some(at) => match self.ancestors.iter().rposition(|a| a.id() == n.id()) {
                Some(i) => i.checked_sub(1).map(|i| self.ancestors[i]),
                None if self.children_of(at).iter().any(|k| k.id() == n.id()) => Some(at),
                None => n.parent(),
            },
            None => n.parent(),
        };
        self.parents.insert(n.id(), p);
        p
    }

    pub(super) fn parent_kind(&mut self, n: Node<'t>) -> Option<u16> {
        self.parent(n).map(|p| p.kind_id())
    }

    pub(super) fn in_class_body(&mut self, n: Node<'t>) -> bool {
        self.parent_kind(n) == Some(self.kinds.class_body)
    }

    /// The sibling before `n` (named or not), as `Node::prev_sibling`.
    pub(super) fn prev_sibling(&mut self, n: Node<'t>) -> Option<Node<'t>> {
        let Some(p) = self.parent(n) else {
            return n.prev_sibling();
        };
        let kids = self.children_of(p);
        match kids.iter().position(|k| k.id() == n.id()) {
            Some(i) => i.checked_sub(1).map(|i| kids[i]),
            None => n.prev_sibling(),
        }
    }

    /// Wrap a declaration in the statements that own it: `export`, `declare`, and the
    /// expression statement of a namespace.
    pub(super) fn statement_of(&mut self, node: Node<'t>) -> Node<'t> {
        let k = self.kinds;
        let mut n = node;
        while let Some(p) = self.parent(n) {
            let kind = p.kind_id();
            if kind == k.export_statement || kind == k.ambient_declaration || kind == k.expression_statement {
                n = p;
            } else {
                break;
            }
        }
        n
    }

    /// The node of a variable definition: the whole `const`/`let`/`var` statement when it
    /// declares only this name, else the declarator alone.
    pub(super) fn variable_statement(&mut self, declarator: Node<'t>) -> Node<'t> {
        let k = self.kinds;
        let Some(decl) = self.parent(declarator) else {
            return declarator;
        };
        if decl.kind_id() != k.lexical_declaration && decl.kind_id() != k.variable_declaration {
            return declarator;
        }
        let mut c = decl.walk();
        let count = decl.named_children(&mut c).filter(|n| n.kind_id() == k.variable_declarator).count();
        if count == 1 { self.statement_of(decl) } else { declarator }
    }

    /// First decorator sibling before a class member (TypeScript puts member decorators in
    /// the class body).
    pub(super) fn first_decorator(&mut self, member: Node<'t>) -> Node<'t> {
        let mut start = member;
        let mut prev = self.prev_sibling(member);
        while let Some(p) = prev {
            if p.kind_id() == self.kinds.decorator {
                start = p;
                prev = self.prev_sibling(p);
            } else {
                break;
            }
        }
        start
    }
}

pub(super) fn first_non_decorator<'t>(k: &Kinds, n: Node<'t>) -> Node<'t> {
    let mut c = n.walk();
    n.children(&mut c).find(|c| c.kind_id() != k.decorator && c.kind_id() != k.comment).unwrap_or(n)
}

/// Whether `n` has the anonymous token of kind `token` among its children.
pub(super) fn has_token(n: Node, token: u16) -> bool {
    let mut c = n.walk();
    n.children(&mut c).any(|k| !k.is_named() && k.kind_id() == token)
}
