//! Runs tests under carve shims, reads traces, builds the object dependency graph and classifies it.
