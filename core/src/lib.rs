//! Language-free infrastructure of carve, the ground floor every other crate stands on:
//!
//! - [`tree`]: shadow copies, file lists and content digests of a repository tree, following
//!   one [`tree::SkipPolicy`] (version control, caches, environments, installed dependencies,
//!   build outputs) that the languages feed with their data — `core` names no language;
//! - [`patch`]: git-style patches between trees, applying them with `git apply`, and the
//!   paths a patch touches;
//! - [`process`]: one process under a watchdog (its own process group, output to files, killed
//!   with everything it started when a deadline passes or it reports no progress);
//! - [`progress`]: the one progress reporter (a spinner or a bar on a terminal, else silence);
//! - [`fs`]: atomic writes and folder replacement, and the error naming the path;
//! - [`oci`]: the OCI runtime (find a working container engine, build an image from a
//!   Dockerfile, run a command in it on a copy of a folder and copy its results out).
//!
//! Every other crate calls `core` for these, so none of them knows more than it needs about
//! the machine it runs on.

pub mod fs;
pub mod groups;
pub mod oci;
pub mod patch;
pub mod process;
pub mod progress;
pub mod tree;
