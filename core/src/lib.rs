//! Language-free infrastructure of carve: for now the OCI runtime ([`oci`]: find a working
//! container engine, build an image from a Dockerfile, run a command in it on a copy of a
//! folder and copy its results out). Tree copy, patches, atomic writes, process supervision
//! and progress will move here, so that every other crate calls `core` and none of them
//! knows more than it needs about the machine it runs on.

pub mod oci;
