//! Progress on a terminal (which instance or stage, elapsed, remaining), nothing otherwise:
//! carve-core's one reporter.

pub use carve_core::progress::Progress;
