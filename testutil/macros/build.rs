//! `#[needs]` looks for tools when a test crate is compiled; rebuild it (and so the tests
//! that use it) when the search path or the CI switch changes.

fn main() {
    for var in ["PATH", "CI", "CARVE_TEST_PYTHON"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
}
