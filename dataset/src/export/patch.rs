//! Unified diffs as the exports reshape them: split by file, and a whole-file addition turned
//! into the deletion of that file (FeatureBench's Level 1 `test_patch`).

/// One file's part of a `git diff`: its path (the `b/` side, or `a/` for a deletion) and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub path: String,
    pub text: String,
    /// `new file mode`: the diff adds the whole file.
    pub added: bool,
}

/// The per-file parts of `patch`, in order.
pub fn split(patch: &str) -> Vec<FileDiff> {
    let mut out: Vec<FileDiff> = Vec::new();
    for line in patch.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let path = rest.trim_end().rsplit_once(" b/").map(|(_, b)| b.to_string()).unwrap_or_default();
            out.push(FileDiff { path, text: String::new(), added: false });
        }
        if let Some(last) = out.last_mut() {
            if line.starts_with("new file mode") {
                last.added = true;
            }
            last.text.push_str(line);
        }
    }
    out
}

/// The parts of `patch` whose path is not in `drop`, joined.
pub fn without(patch: &str, drop: &[String]) -> String {
    split(patch).into_iter().filter(|f| !drop.contains(&f.path)).map(|f| f.text).collect()
}

/// The deletion of the file a whole-file addition `add` creates, or `None` when `add` is not one.
pub fn deletion_of(add: &FileDiff) -> Option<String> {
    if !add.added {
        return None;
    }
    let mut out = String::new();
    for line in add.text.split_inclusive('\n') {
        let converted = if line.starts_with("diff --git ") || line.starts_with("index ") {
            line.to_string()
        } else if let Some(mode) = line.strip_prefix("new file mode") {
            format!("deleted file mode{mode}")
        } else if line.starts_with("--- /dev/null") {
            format!("--- a/{}\n", add.path)
        } else if line.starts_with("+++ ") {
            "+++ /dev/null\n".to_string()
        } else if let Some(h) = line.strip_prefix("@@ -0,0 +") {
            let (range, tail) = h.split_once(" @@").unwrap_or((h, "\n"));
            format!("@@ -{range} +0,0 @@{tail}")
        } else if let Some(body) = line.strip_prefix('+') {
            format!("-{body}")
        } else if line.starts_with('\\') {
            line.to_string()
        } else {
            return None;
        };
        out.push_str(&converted);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "diff --git a/t/test_a.py b/t/test_a.py\nnew file mode 100644\n--- /dev/null\n+++ b/t/test_a.py\n@@ -0,0 +1,2 @@\n+def test_a():\n+    pass\ndiff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n";

    #[test]
    fn a_patch_splits_by_file_and_drops_some() {
        let parts = split(PATCH);
        assert_eq!(
            parts.iter().map(|p| (p.path.as_str(), p.added)).collect::<Vec<_>>(),
            [("t/test_a.py", true), ("m.py", false)]
        );
        assert_eq!(parts.iter().map(|p| p.text.as_str()).collect::<String>(), PATCH);
        assert!(without(PATCH, &["t/test_a.py".into()]).starts_with("diff --git a/m.py"));
    }

    #[test]
    fn a_whole_file_addition_becomes_its_deletion() {
        let parts = split(PATCH);
        let del = deletion_of(&parts[0]).unwrap();
        assert_eq!(
            del,
            "diff --git a/t/test_a.py b/t/test_a.py\ndeleted file mode 100644\n--- a/t/test_a.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-def test_a():\n-    pass\n"
        );
        assert_eq!(deletion_of(&parts[1]), None);
    }
}
