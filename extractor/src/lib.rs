//! Source edits, interface contracts, problem statements and patches.
