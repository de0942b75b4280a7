//! carve: carve a feature out of a real repository and turn it into an executable coding
//! task. This binary is the CLI: each command in `commands/` parses its arguments, calls the
//! library crates — `pipeline` (the single-feature pipeline and its candidate loop),
//! `history` (FeatureArc chains) and `eval` (grading and reports) — and prints.

mod cli;
mod commands;
mod output;

use std::process::ExitCode;

/// Exit codes: 0 success, 1 the work ran but something failed validation, 2 usage or
/// environment error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Success,
    ValidationFailed,
}

fn main() -> ExitCode {
    // Broken pipe (`carve audit … | head`) is not an error.
    reset_sigpipe();
    // Test runs and image builds run in process groups of their own: stopping carve stops them.
    if let Err(e) = carve_core::groups::stop_children_on_signals() {
        eprintln!(
            "carve: warning: could not watch for SIGINT/SIGTERM ({e}); a stopped carve may leave test runs going"
        );
    }
    let args = match cli::Cli::try_parse_grouped() {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match commands::run(args) {
        Ok(Status::Success) => ExitCode::from(0),
        Ok(Status::ValidationFailed) => ExitCode::from(1),
        Err(err) => {
            eprintln!("carve: error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(2)
        }
    }
}

#[allow(unsafe_code)]
fn reset_sigpipe() {
    // SAFETY: restoring the default disposition of SIGPIPE at start-up, before any thread
    // exists, so a closed stdout ends the process quietly as for other Unix tools.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
