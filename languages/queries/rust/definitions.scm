; Rust items: what the index records of the direct children of a source file or of a
; `mod`, `impl` or `trait` body. The index runs this query on each such list with a
; maximum start depth of one, so it never looks inside function bodies (items there belong
; to their function); nested lists are queried in turn as the index meets them.
;
; Every named child that no pattern captures is module-level code (`const`, `static`,
; item-level macro calls …): the index records the paths it names.

(function_item name: (_) @name body: (_) @body) @function
(function_signature_item name: (_) @name) @function
(struct_item name: (_) @name body: (_)? @body) @struct
(union_item name: (_) @name body: (_)? @body) @struct
(enum_item name: (_) @name body: (_)? @body) @enum
(trait_item name: (_) @name body: (_) @body) @trait
(impl_item trait: (_)? @trait_path type: (_) @self_type body: (_)? @body) @impl
(mod_item name: (_) @name body: (_)? @body) @module
(type_item name: (_) @name) @type_alias
(macro_definition name: (_) @name) @macro

; `use` items, one leaf per name of their tree.
(use_declaration argument: (_) @argument) @use

; What precedes an item and belongs to it: attributes and outer doc comments (`///`,
; `/** */`). Other comments and inner attributes (`#![…]`, `//!`) belong to nothing.
(attribute_item) @attribute
(line_comment outer: (_)) @doc
(block_comment outer: (_)) @doc
(line_comment !outer) @ignore
(block_comment !outer) @ignore
(inner_attribute_item) @ignore
