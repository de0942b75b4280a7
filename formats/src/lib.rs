//! The files carve writes and reads, as versioned serde types shared by every writer and
//! reader (in the manner of `nextest-metadata`). One module per format; each has a `VERSION`
//! constant that its `version` field holds, and [`read`] refuses a file of another version
//! with a message naming the file:
//!
//! | module | file | written by | read by |
//! |---|---|---|---|
//! | [`instance`] | `instance.json`, `tasks.jsonl` | `carve tasks` (emit) | `carve validate`, `carve grade` |
//! | [`audit`] | `audit.json`, `audit-<feature>.json` | `carve tasks`, `carve audit` | people, the audit page |
//! | [`contract`] | `contract.json` | `carve tasks`, `carve arc build` | agents, the leakage check |
//! | [`validation`] | `validation.json` of a task | `carve tasks`, `carve validate` | people, harnesses |
//! | [`chain`] | `chain.json` | `carve arc build` | `carve arc validate`, `carve arc run` |
//! | [`gate`] | `validation.json` of a chain gate | `carve arc build` | people |
//! | [`results`] | `grade.json`, `run.json` | `carve grade`, `carve arc run` | `carve report`, `carve arc report` |
//! | [`dataset`] | the manifest, `result.json`, `stats.json`, `slices/<slice>.json`, `summary.json` | `carve dataset run`, `merge` | `carve dataset merge`, `export`, people |
//!
//! The authoritative description of every field is `docs/formats.md`; a test checks that it
//! names every field of every type here, and insta snapshots of each type's JSON schema show
//! a format change in review.
//!
//! Byte-identical output: `serde_json` runs with `preserve_order`, so a type's field order is
//! its JSON key order, and `skip_serializing_if` says which fields are left out when empty.
//! Change neither without bumping the format's version (the checklist is at the top of
//! `docs/formats.md`).
//!
//! This crate names no language and depends on no other carve crate: where a format holds a
//! language name or a definition kind, the type takes it as a parameter (`L`, `K`), `String`
//! by default; `carve_languages::Language` and `DefinitionKind` serialize to the same strings.
//!
//! Structs are `#[non_exhaustive]`: other crates build them with their `new` constructors and
//! set the optional fields afterwards. Closed vocabularies that readers match on
//! ([`TestStatus`], [`audit::Status`], [`chain::EvidenceKind`], …) are exhaustive; adding a
//! value to one is a format change. [`audit::Reason`] is `#[non_exhaustive]`: new reasons may
//! be added without a version bump.

pub mod audit;
pub mod chain;
pub mod contract;
pub mod dataset;
pub mod gate;
pub mod instance;
mod read;
pub mod results;
mod status;
pub mod validation;

pub use read::{Format, FormatError, Version, from_str, read, to_pretty};
pub use status::TestStatus;

/// The JSON schema of every format, snapshotted: a change to a format's fields, their
/// types or what may be left out shows in review (`cargo insta review`).
#[cfg(test)]
mod schema_snapshots {
    macro_rules! snapshot {
        ($name:ident, $ty:ty) => {
            #[test]
            fn $name() {
                insta::assert_json_snapshot!(stringify!($name), schemars::schema_for!($ty));
            }
        };
    }

    snapshot!(instance, crate::instance::Instance);
    snapshot!(audit, crate::audit::Audit);
    snapshot!(contract, crate::contract::Contract);
    snapshot!(validation, crate::validation::Validation);
    snapshot!(chain, crate::chain::ChainFile);
    snapshot!(gate, crate::gate::GateValidation);
    snapshot!(grade, crate::results::GradeRun);
    snapshot!(arc_run, crate::results::ArcRun);
    snapshot!(dataset_manifest, crate::dataset::Manifest);
    snapshot!(dataset_result, crate::dataset::RepoResult);
    snapshot!(dataset_stats, crate::dataset::RepoStats);
    snapshot!(dataset_slice, crate::dataset::SliceRecord);
    snapshot!(dataset_summary, crate::dataset::Summary);
}
