//! carve's single-feature pipeline as a library: from a repository and the tests of a
//! feature to validated task bundles.
//!
//! ```text
//! init -> env -> baseline -> trace -> graph -> classify -> extract (+ repair) -> validate -> emit
//! ```
//!
//! One module per stage; each is a function over a [`Session`] and what the stages before it
//! produced, and imports only from earlier stages (data flows one way). [`runs`] is the one test
//! run layer: every stage that runs tests uses it, and it needs only a [`config::Config`] and a
//! tree, so FeatureArc (`carve-history`) runs its chain states and evaluation (`carve-eval`)
//! its gates through it too; [`selection`] picks F2P and P2P tests from the runs of a pair of
//! states. [`candidates`] is the candidate loop (classify → extract → validate → repair, then
//! emit) that `carve tasks` runs for every candidate feature. The `carve` binary parses
//! arguments, calls these functions and prints.
//!
//! Errors are [`Error`]: what failed, with the file, test or command it concerns, and the
//! cause chain ([`Error::chain`]).

pub mod agent_workspace;
pub mod baseline;
pub mod candidates;
pub mod classify;
pub mod config;
pub mod emit;
pub mod env;
mod error;
pub mod extract;
pub mod groups;
pub mod identity;
pub mod image_runs;
pub mod init;
pub mod leakage;
pub mod progress;
pub mod protect;
pub mod repair;
pub mod runs;
pub mod selection;
mod session;
pub mod trace;
pub mod validate;
pub mod workspace;

pub use error::{Context, Error, Result};
pub use session::{Session, SessionOptions, TestId, default_jobs, resolve_tests, test_definition_file, test_file};
