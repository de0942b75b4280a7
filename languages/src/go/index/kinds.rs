//! Node kind and field ids of the Go grammar, looked up once per process: comparing
//! `Node::kind_id()` with a number instead of `Node::kind()` (a C string turned into `&str`)
//! with a literal, and `child_by_field_id` instead of `child_by_field_name` (a name lookup
//! per call), keeps the per-node cost of the index's walks low.

use std::num::NonZeroU16;
use std::sync::LazyLock;

macro_rules! ids {
    ($(#[$m:meta])* $name:ident { $($field:ident = $text:literal),* $(,)? } via $lookup:expr; $ty:ty) => {
        $(#[$m])*
        pub(super) struct $name {
            $(pub $field: $ty,)*
        }
        impl $name {
            fn load(language: &tree_sitter::Language) -> Self {
                let lookup = $lookup;
                Self { $($field: lookup(language, $text),)* }
            }
            /// Every `(name, id)`, for the test that checks them against the grammar.
            #[cfg(test)]
            pub fn all(&self) -> Vec<(&'static str, $ty)> {
                vec![$(($text, self.$field),)*]
            }
        }
    };
}

fn kind(language: &tree_sitter::Language, name: &str) -> u16 {
    let id = language.id_for_node_kind(name, true);
    // The names below are the grammar's; a missing one is a bug in this file.
    assert!(id != 0, "the Go grammar has no named node kind `{name}`");
    id
}

fn field(language: &tree_sitter::Language, name: &str) -> u16 {
    language
        .field_id_for_name(name)
        .map(NonZeroU16::get)
        .unwrap_or_else(|| panic!("the Go grammar has no field `{name}`"))
}

ids! {
    /// Named node kinds the index looks at.
    Kinds {
        identifier = "identifier",
        type_identifier = "type_identifier",
        package_identifier = "package_identifier",
        import_declaration = "import_declaration",
        import_spec = "import_spec",
        package_clause = "package_clause",
        comment = "comment",
        interpreted_string_literal = "interpreted_string_literal",
        raw_string_literal = "raw_string_literal",
        selector_expression = "selector_expression",
        qualified_type = "qualified_type",
        pointer_type = "pointer_type",
        parenthesized_type = "parenthesized_type",
        generic_type = "generic_type",
        parameter_declaration = "parameter_declaration",
        variadic_parameter_declaration = "variadic_parameter_declaration",
        var_spec = "var_spec",
        const_spec = "const_spec",
        type_parameter_declaration = "type_parameter_declaration",
        type_spec = "type_spec",
        type_alias = "type_alias",
        short_var_declaration = "short_var_declaration",
        range_clause = "range_clause",
        call_expression = "call_expression",
        composite_literal = "composite_literal",
        unary_expression = "unary_expression",
        struct_type = "struct_type",
        interface_type = "interface_type",
        method_elem = "method_elem",
        var_declaration = "var_declaration",
        var_spec_list = "var_spec_list",
        expression_list = "expression_list",
        literal_value = "literal_value",
        keyed_element = "keyed_element",
        literal_element = "literal_element",
        map_type = "map_type",
        slice_type = "slice_type",
        array_type = "array_type",
        int_literal = "int_literal",
        float_literal = "float_literal",
        imaginary_literal = "imaginary_literal",
        rune_literal = "rune_literal",
    } via kind; u16
}

ids! {
    /// Field ids the index looks at.
    Fields {
        name = "name",
        type_ = "type",
        operand = "operand",
        field = "field",
        package = "package",
        left = "left",
        right = "right",
        function = "function",
        body = "body",
        parameters = "parameters",
        result = "result",
        type_parameters = "type_parameters",
        value = "value",
        key = "key",
        element = "element",
    } via field; u16
}

/// Kind and field ids of the Go grammar.
pub(super) struct Ids {
    pub kinds: Kinds,
    pub fields: Fields,
}

static IDS: LazyLock<Ids> = LazyLock::new(|| {
    let language = crate::Language::Go.grammar();
    Ids { kinds: Kinds::load(&language), fields: Fields::load(&language) }
});

pub(super) fn ids() -> &'static Ids {
    &IDS
}
