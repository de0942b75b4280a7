//! Progress on a terminal, silence otherwise: carve-core's one reporter.

pub use carve_core::progress::Progress;
