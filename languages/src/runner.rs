//! Test-runner adapters: run a project's own tests, one status per test id.
