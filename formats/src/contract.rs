//! The interface contract (`contract.json` of a task bundle and of each chain stage;
//! `docs/formats.md`, "Contract"): every extracted object a solver must implement, with its
//! path, import path, kind, full signature, docstring and enclosing class.
//!
//! `L` is the type of a language's name and `K` of a definition kind: `carve_extractor`
//! builds contracts with `carve_languages`' `Language` and `DefinitionKind`; a reader that
//! names no language reads them as `String`s (the default).

use serde::{Deserialize, Serialize};

use crate::{Format, Version};

/// Version of `contract.json`. Bump when a field changes meaning or is removed.
pub const VERSION: u32 = 1;

/// `contract.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Contract<L = String, K = String> {
    pub version: u32,
    pub language: L,
    /// Files that held extracted code (the files to touch), sorted.
    pub files: Vec<String>,
    /// Of `files`, those every definition of which is extracted: the feature is the whole
    /// module (what is left of it is its imports and module-level code), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub whole_modules: Vec<String>,
    /// One entry per top object, in file and source order.
    pub objects: Vec<ContractObject<L, K>>,
}

impl<L, K> Contract<L, K> {
    /// A contract with no whole module; `whole_modules` is set afterwards.
    pub fn new(language: L, files: Vec<String>, objects: Vec<ContractObject<L, K>>) -> Contract<L, K> {
        Contract { version: VERSION, language, files, whole_modules: Vec::new(), objects }
    }
}

impl<L, K> Format for Contract<L, K>
where
    L: Serialize + serde::de::DeserializeOwned,
    K: Serialize + serde::de::DeserializeOwned,
{
    const FILE: &'static str = "contract.json";
    const VERSION: Version = Version::Number(VERSION);
}

/// One object of a contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(bound(deserialize = "L: Deserialize<'de>, K: Deserialize<'de>"))]
#[non_exhaustive]
pub struct ContractObject<L = String, K = String> {
    /// Node id (`path::qualname`).
    pub id: String,
    pub language: L,
    pub path: String,
    /// Dotted module (`inventory.pricing`), when the language has one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub module: Option<String>,
    pub kind: K,
    pub name: String,
    pub qualname: String,
    /// The import that makes it reachable; `None` for a function nested in another.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub import_path: Option<String>,
    /// How to reach it once imported: `total_value`, `Cart.total`.
    pub access: String,
    pub signature: Signature,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub docstring: Option<String>,
    /// Qualified name of the class (type) a method belongs to.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub enclosing_class: Option<String>,
    /// Rust: the trait a method implements, as its impl block writes it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub enclosing_trait: Option<String>,
    /// Rust: the header of the impl block a method is written in.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub enclosing_impl: Option<String>,
    /// Qualified name of the function an extracted nested function lives in.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub enclosing_function: Option<String>,
    /// The object stays in the repository; only its `members` are to be implemented.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub existing: bool,
    /// With `existing`: every method of the class is among its `members` (only the class
    /// statement and its attributes stay), so the class as a whole is the work.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub all_methods: bool,
    /// Extracted classes named in the signature's annotations or bases (node ids).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub uses_types: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub members: Vec<ContractObject<L, K>>,
}

impl<L, K> ContractObject<L, K> {
    /// An object with its required fields; the optional ones are set afterwards.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: String,
        language: L,
        path: String,
        kind: K,
        name: String,
        qualname: String,
        access: String,
        signature: Signature,
    ) -> ContractObject<L, K> {
        ContractObject {
            id,
            language,
            path,
            module: None,
            kind,
            name,
            qualname,
            import_path: None,
            access,
            signature,
            docstring: None,
            enclosing_class: None,
            enclosing_trait: None,
            enclosing_impl: None,
            enclosing_function: None,
            existing: false,
            all_methods: false,
            uses_types: Vec::new(),
            members: Vec::new(),
        }
    }
}

/// A signature as the language writes it, and its parts (the definition index's).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Signature {
    /// The header exactly as written, without the body; decorators are not included.
    pub text: String,
    pub parameters: Vec<Parameter>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub returns: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub is_async: bool,
    /// Decorators as written, without the `@`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub decorators: Vec<String>,
    /// Base classes / superclass list as written (classes only).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub bases: Vec<String>,
    /// Go methods: the receiver as written, without parentheses (`c *Circle`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub receiver: Option<String>,
    /// Generic type parameters with their constraints as written (`[T Number]`, `<T: Ord>`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub type_parameters: Option<String>,
}

impl Signature {
    pub fn new(text: String, parameters: Vec<Parameter>) -> Signature {
        Signature { text, parameters, ..Signature::default() }
    }
}

/// How a parameter is passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ParameterKind {
    PositionalOnly,
    PositionalOrKeyword,
    /// `*args`
    VarPositional,
    KeywordOnly,
    /// `**kwargs`
    VarKeyword,
}

/// One parameter of a signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Parameter {
    pub name: String,
    pub kind: ParameterKind,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub annotation: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub default: Option<String>,
}

impl Parameter {
    pub fn new(name: String, kind: ParameterKind, annotation: Option<String>, default: Option<String>) -> Parameter {
        Parameter { name, kind, annotation, default }
    }
}
