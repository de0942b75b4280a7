//! Masking Rust sources.
