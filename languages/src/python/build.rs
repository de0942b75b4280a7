//! Python's check of masked files: `compile()` every changed file in one interpreter (no
//! bytecode written). Python has no build step, so this stands in for a build check.

use std::path::{Path, PathBuf};

use crate::edit::MaskedCheck;

/// `compile()` every file given; one line `path\tline\tmessage` per failure.
const COMPILE_SCRIPT: &str = r#"
import sys
bad = 0
for path in sys.argv[1:]:
    try:
        with open(path, "rb") as f:
            compile(f.read(), path, "exec", dont_inherit=True)
    except SyntaxError as e:
        print(f"{path}\t{e.lineno or 0}\t{e.msg}")
        bad = 1
    except (ValueError, OSError) as e:
        print(f"{path}\t0\t{e}")
        bad = 1
sys.exit(bad)
"#;

/// Compile `files` (relative to `tree`) with `python` (`python3` on `PATH` when `None`); the
/// first failure names the file and line. Without an interpreter the check is skipped
/// with a warning.
pub fn compile_check(tree: &Path, files: &[&String], python: Option<&Path>) -> MaskedCheck {
    let python = python.map_or_else(|| PathBuf::from("python3"), Path::to_path_buf);
    let mut cmd = super::interpreter::resolve(&python, tree, &[]).command();
    cmd.arg("-c").arg(COMPILE_SCRIPT).args(files.iter().map(|f| f.as_str())).current_dir(tree);
    cmd.env("PYTHONDONTWRITEBYTECODE", "1");
    let output = match cmd.output() {
        Ok(o) => o,
        Err(e) => {
            return MaskedCheck::Skipped {
                warning: format!(
                    "could not run {} ({e}); masked files were checked by parsing only, not compiled",
                    python.display()
                ),
            };
        }
    };
    if output.status.success() {
        return MaskedCheck::Passed;
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    if let Some(line) = stdout.lines().next() {
        let mut parts = line.splitn(3, '\t');
        let path = parts.next().unwrap_or("").to_string();
        let line = parts.next().and_then(|l| l.parse().ok()).unwrap_or(0);
        let message = parts.next().unwrap_or("").to_string();
        return MaskedCheck::Failed { path, line, message };
    }
    MaskedCheck::CommandFailed {
        command: format!("{} -c <compile check>", python.display()),
        message: String::from_utf8_lossy(&output.stderr).trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compile_errors_name_the_file_and_line() {
        let out = tempfile::tempdir().unwrap();
        std::fs::write(out.path().join("bad.py"), "x = 1\nreturn 2\n").unwrap();
        let file = "bad.py".to_string();
        match compile_check(out.path(), &[&file], None) {
            MaskedCheck::Failed { path, line, .. } => assert_eq!((path.as_str(), line), ("bad.py", 2)),
            MaskedCheck::Skipped { warning } => assert!(std::env::var_os("CI").is_none(), "{warning}"),
            other => panic!("{other:?}"),
        }
        let missing = compile_check(out.path(), &[&file], Some(Path::new("/nonexistent/python")));
        assert!(
            matches!(&missing, MaskedCheck::Skipped { warning } if warning.contains("/nonexistent/python")),
            "{missing:?}"
        );
    }
}
