//! Reading history with gix: the first-parent commits of a range, the files a commit
//! changed against its first parent (a merge is one unit: its whole change against the
//! branch it was merged into), and blob contents. Nothing here writes to the repository.

use std::collections::BTreeMap;
use std::path::Path;

use gix::ObjectId;

use crate::HistoryError;

/// One first-parent commit.
#[derive(Debug, Clone)]
pub struct CommitInfo {
    pub id: ObjectId,
    /// The first parent (`None` for a root commit).
    pub parent: Option<ObjectId>,
    /// More than one parent: a merged branch taken as one unit.
    pub is_merge: bool,
    pub summary: String,
    pub author_time: i64,
    pub tree: ObjectId,
}

/// A file changed by a commit (paths `/`-separated, relative to the root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeChange {
    pub path: String,
    /// Blob before (`None`: the file was added).
    pub old: Option<ObjectId>,
    /// Blob after (`None`: the file was deleted).
    pub new: Option<ObjectId>,
}

/// An opened repository.
pub struct Repo {
    repo: gix::Repository,
}

fn git_err<E: std::fmt::Display>(what: impl Into<String>) -> impl FnOnce(E) -> HistoryError {
    let what = what.into();
    move |e| HistoryError::Git { what, message: e.to_string() }
}

impl Repo {
    pub fn open(path: &Path) -> Result<Repo, HistoryError> {
        let mut repo = gix::open(path).map_err(|e| HistoryError::Git {
            what: format!("open {} as a git repository", path.display()),
            message: format!("{e}; pass the path of a git checkout or a bare repository"),
        })?;
        repo.object_cache_size(Some(64 * 1024 * 1024));
        Ok(Repo { repo })
    }

    /// Resolve a revision (`HEAD`, a branch, a commit prefix) to a commit id.
    pub fn resolve(&self, rev: &str) -> Result<ObjectId, HistoryError> {
        let id = self.repo.rev_parse_single(rev).map_err(git_err(format!("resolve revision `{rev}`")))?;
        let commit = id
            .object()
            .map_err(git_err(format!("read `{rev}`")))?
            .peel_to_commit()
            .map_err(git_err(format!("`{rev}` is not a commit")))?;
        Ok(commit.id)
    }

    pub fn commit(&self, id: ObjectId) -> Result<CommitInfo, HistoryError> {
        let c = self.repo.find_commit(id).map_err(git_err(format!("read commit {id}")))?;
        let parents: Vec<ObjectId> = c.parent_ids().map(|p| p.detach()).collect();
        let summary =
            c.message_raw().map(|m| m.to_string().lines().next().unwrap_or("").trim().to_string()).unwrap_or_default();
        let author_time = c.time().map(|t| t.seconds).unwrap_or(0);
        let tree = c.tree_id().map_err(git_err(format!("read the tree of {id}")))?.detach();
        Ok(CommitInfo { id, parent: parents.first().copied(), is_merge: parents.len() > 1, summary, author_time, tree })
    }

    /// The first-parent commits of `range`, oldest first. `range` is `A..B` (commits after
    /// `A` up to `B`), `B` (everything up to `B`), or empty (`HEAD`). At most `limit` of the
    /// newest are kept when `limit` is given.
    pub fn first_parent_commits(&self, range: &str, limit: Option<usize>) -> Result<Vec<CommitInfo>, HistoryError> {
        let (start, end) = match range.split_once("..") {
            Some((a, b)) => (Some(a), if b.is_empty() { "HEAD" } else { b }),
            None => (None, if range.is_empty() { "HEAD" } else { range }),
        };
        let stop = start.map(|a| self.resolve(a)).transpose()?;
        let mut out = Vec::new();
        let mut next = Some(self.resolve(end)?);
        while let Some(id) = next {
            if Some(id) == stop || limit.is_some_and(|l| out.len() >= l) {
                break;
            }
            let info = self.commit(id)?;
            next = info.parent;
            out.push(info);
        }
        if let (Some(stop), None) = (stop, next) {
            return Err(HistoryError::Git {
                what: format!("walk the range `{range}`"),
                message: format!(
                    "{stop} is not a first-parent ancestor of `{end}`; pass A..B with A on B's first-parent line"
                ),
            });
        }
        out.reverse();
        Ok(out)
    }

    /// Files changed from tree `old` (or nothing) to tree `new`, in path order. Unchanged
    /// subtrees are skipped by id, so the cost follows the size of the change.
    pub fn diff_trees(&self, old: Option<ObjectId>, new: ObjectId) -> Result<Vec<TreeChange>, HistoryError> {
        let mut out = Vec::new();
        self.diff_into(old, Some(new), "", &mut out)?;
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    fn tree_entries(&self, id: Option<ObjectId>) -> Result<BTreeMap<String, (bool, ObjectId)>, HistoryError> {
        let mut map = BTreeMap::new();
        let Some(id) = id else { return Ok(map) };
        let tree = self.repo.find_tree(id).map_err(git_err(format!("read tree {id}")))?;
        let decoded = tree.decode().map_err(git_err(format!("decode tree {id}")))?;
        for e in decoded.entries {
            // Submodules and symlinks carry no source to index.
            if e.mode.is_tree() || e.mode.is_blob() {
                map.insert(e.filename.to_string(), (e.mode.is_tree(), e.oid.to_owned()));
            }
        }
        Ok(map)
    }

    fn diff_into(
        &self,
        old: Option<ObjectId>,
        new: Option<ObjectId>,
        prefix: &str,
        out: &mut Vec<TreeChange>,
    ) -> Result<(), HistoryError> {
        if old == new {
            return Ok(());
        }
        let a = self.tree_entries(old)?;
        let b = self.tree_entries(new)?;
        let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        for name in names {
            let path = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
            let (ea, eb) = (a.get(name), b.get(name));
            if ea.map(|e| e.1) == eb.map(|e| e.1) && ea.map(|e| e.0) == eb.map(|e| e.0) {
                continue;
            }
            let tree_of = |e: Option<&(bool, ObjectId)>| e.filter(|e| e.0).map(|e| e.1);
            let blob_of = |e: Option<&(bool, ObjectId)>| e.filter(|e| !e.0).map(|e| e.1);
            if tree_of(ea).is_some() || tree_of(eb).is_some() {
                self.diff_into(tree_of(ea), tree_of(eb), &path, out)?;
            }
            let (ba, bb) = (blob_of(ea), blob_of(eb));
            if ba != bb {
                out.push(TreeChange { path, old: ba, new: bb });
            }
        }
        Ok(())
    }

    /// Every file of a tree, `(path, blob)`, in path order.
    pub fn tree_files(&self, tree: ObjectId) -> Result<Vec<(String, ObjectId)>, HistoryError> {
        Ok(self.diff_trees(None, tree)?.into_iter().filter_map(|c| Some((c.path, c.new?))).collect())
    }

    pub fn blob(&self, id: ObjectId) -> Result<Vec<u8>, HistoryError> {
        let mut blob = self.repo.find_blob(id).map_err(git_err(format!("read blob {id}")))?;
        Ok(blob.take_data())
    }
}
