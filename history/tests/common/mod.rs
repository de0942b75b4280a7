//! What the history crate's end-to-end tests share.

use carve_history::bundle::BuildConfig;
use carve_languages::Language;
use carve_languages::runner::TestCommand;

/// How a fixture chain's bundles are built: `test`, 300 s per run, 60 s per test, no carve.toml.
pub fn build_config(language: Language, test: TestCommand, repo_name: &str) -> BuildConfig {
    BuildConfig {
        language,
        test,
        run_timeout: std::time::Duration::from_secs(300),
        test_timeout: std::time::Duration::from_secs(60),
        carve_toml: "version = 1\n".into(),
        repo_name: repo_name.into(),
    }
}
