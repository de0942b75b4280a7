//! Chain mining (FeatureArc III-B): an evidence graph over the analysed commits and a search
//! over it for same-feature chains of 2–10 stages.
//!
//! Nodes are first-parent commits (a merge is one unit). An edge from a later commit `L` to
//! an earlier commit `E` carries its evidence:
//! - `shared_definition`: `L` modifies or renames a function-like definition `E` added or
//!   modified (a class changes whenever one of its methods does: containers do not count);
//! - `calls`: a line `L` added names a definition `E` added, in `E`'s file, its directory or
//!   a file that imports it (or, by name alone, a distinctive name only one or two commits defined);
//! - `imports`: `L` adds an import of a file `E` added;
//! - `shared_file`: both change the same non-test source file.
//!
//! Two searches propose chains: a global beam search from every commit and an anchor-guided
//! search from commits that add feature code together with tests. A candidate is kept only
//! when every stage adds or changes tests, changes feature code, its tests name something the
//! chain's code defines, and every later stage builds on code an earlier stage added (not
//! merely a shared file). Kept chains do not share commits; every discarded candidate says why.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::analysis::{CommitAnalysis, History, stable_id};

/// What a piece of evidence says: `chain.json`'s vocabulary (`carve_formats::chain`).
pub use carve_formats::chain::EvidenceKind;

/// One piece of evidence for a link: `from` is an element of the later commit (a definition
/// id or a file), `to` one of the earlier commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub kind: EvidenceKind,
    pub from: String,
    pub to: String,
    pub detail: String,
    pub from_commit: String,
    pub to_commit: String,
    #[serde(skip)]
    pub weight: f64,
    /// `to` was added (not merely modified) by the earlier commit.
    #[serde(skip)]
    pub onto_addition: bool,
}

impl Evidence {
    /// The evidence as `chain.json` records it (without the mining weights).
    pub fn to_chain(&self) -> carve_formats::chain::Evidence {
        carve_formats::chain::Evidence::new(
            self.kind,
            self.from.clone(),
            self.to.clone(),
            self.detail.clone(),
            self.from_commit.clone(),
            self.to_commit.clone(),
        )
    }
}

#[derive(Debug, Clone)]
pub struct MineOptions {
    pub min_stages: usize,
    pub max_stages: usize,
    pub beam_width: usize,
    /// `owner/name` for chain ids (default: `local/<directory name>`).
    pub repo_name: String,
    /// How many discarded candidates the report lists (all are counted).
    pub max_discarded: usize,
    /// A commit changing more files than this, or modifying more definitions than
    /// `max_stage_modified`, is a sweeping change (reformatting, typing, vendoring): it is no
    /// stage and proposes no link.
    pub max_stage_files: usize,
    pub max_stage_modified: usize,
}

impl Default for MineOptions {
    fn default() -> Self {
        MineOptions {
            min_stages: 2,
            max_stages: 10,
            beam_width: 24,
            repo_name: "local/repo".into(),
            max_discarded: 200,
            max_stage_files: 30,
            max_stage_modified: 60,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StageSummary {
    pub index: usize,
    pub commits: Vec<String>,
    pub title: String,
    pub definitions_added: Vec<String>,
    pub definitions_modified: Vec<String>,
    pub tests_added: Vec<String>,
    pub tests_modified: Vec<String>,
    pub files: Vec<String>,
    pub lines: usize,
    /// Evidence linking this stage to earlier stages (empty for stage 0).
    pub evidence: Vec<Evidence>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Chain {
    pub chain_id: String,
    pub score: f64,
    /// How the chain was found: `beam` or `anchor`.
    pub found_by: String,
    pub stages: Vec<StageSummary>,
    /// Share of a later stage's changed files that earlier stages changed too, averaged over
    /// the later stages.
    pub shared_file_share: f64,
    /// The external reviewer's verdict (`carve arc mine --reviewer`), when one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<crate::review::Verdict>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Discarded {
    pub commits: Vec<String>,
    pub found_by: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MineReport {
    pub version: u32,
    pub repo: String,
    pub range: String,
    pub commits: usize,
    pub edges: usize,
    pub candidates: usize,
    /// Commits left out of the search as sweeping changes (see `MineOptions::max_stage_files`).
    pub sweeping: Vec<String>,
    pub chains: Vec<Chain>,
    pub discarded_total: usize,
    pub discarded: Vec<Discarded>,
    pub analysis_seconds: f64,
    pub mining_seconds: f64,
}

/// The evidence graph: for each later commit, its edges to earlier commits.
pub struct EvidenceGraph {
    /// `edges[l]`: earlier commit index → evidence.
    pub edges: Vec<BTreeMap<usize, Vec<Evidence>>>,
}

impl EvidenceGraph {
    pub fn build(commits: &[CommitAnalysis]) -> EvidenceGraph {
        let mut edges: Vec<BTreeMap<usize, Vec<Evidence>>> = vec![BTreeMap::new(); commits.len()];
        // Inverted indexes over earlier commits, filled as the walk goes forward.
        let mut earlier = Earlier::default();
        for (l, c) in commits.iter().enumerate() {
            let out = &mut edges[l];
            earlier.shared_definitions(commits, c, out);
            earlier.calls(commits, l, c, out);
            earlier.imports(commits, l, c, out);
            earlier.shared_files(commits, c, out);
            // this commit becomes "earlier" for the ones after it
            earlier.record(l, c);
        }
        EvidenceGraph { edges }
    }

    pub fn edge_count(&self) -> usize {
        self.edges.iter().map(|m| m.len()).sum()
    }

    /// Weight of the link from `l` to `e` (shared files capped at 3).
    fn weight(&self, l: usize, e: usize) -> f64 {
        let Some(ev) = self.edges.get(l).and_then(|m| m.get(&e)) else { return 0.0 };
        let files: f64 = ev.iter().filter(|x| x.kind == EvidenceKind::SharedFile).map(|x| x.weight).sum();
        let rest: f64 = ev.iter().filter(|x| x.kind != EvidenceKind::SharedFile).map(|x| x.weight).sum();
        files.min(3.0) + rest.min(12.0)
    }

    /// Score of appending `n` to `chain`: its best link to a stage of the chain.
    fn link(&self, chain: &[usize], n: usize) -> f64 {
        chain.iter().map(|&s| self.weight(n, s)).fold(0.0, f64::max)
    }
}

/// Add `ev` to the edge to earlier commit `e`, unless the same evidence is there already.
fn push(out: &mut BTreeMap<usize, Vec<Evidence>>, e: usize, ev: Evidence) {
    let list = out.entry(e).or_default();
    if !list.iter().any(|x| x.kind == ev.kind && x.from == ev.from && x.to == ev.to) {
        list.push(ev);
    }
}

/// What the commits before the current one of [`EvidenceGraph::build`]'s walk did, indexed
/// by what a later commit's evidence looks up.
#[derive(Default)]
struct Earlier<'a> {
    /// Stable definition id → the commits that added (`true`) or modified it.
    touched_def: HashMap<&'a str, Vec<(usize, bool)>>,
    /// Name → the commits that added (or renamed to) a non-test definition of that name, with its id.
    added_name: HashMap<&'a str, Vec<(usize, &'a str)>>,
    /// File → the commit that added it.
    added_file: HashMap<&'a str, usize>,
    /// Non-test source file → the commits that changed it.
    touched_file: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Earlier<'a> {
    /// `shared_definition`: `c` modifies or renames a definition an earlier commit added or modified.
    fn shared_definitions(
        &self,
        commits: &[CommitAnalysis],
        c: &CommitAnalysis,
        out: &mut BTreeMap<usize, Vec<Evidence>>,
    ) {
        let lc = &c.commit;
        let touched: Vec<&str> = c
            .definitions
            .modified
            .iter()
            .map(String::as_str)
            .chain(c.definitions.renamed.iter().map(|r| r.from.as_str()))
            .collect();
        for id in &touched {
            // Classes change with every method; tests are not the feature's code.
            if c.containers.contains(*id) || c.test_defs.contains(*id) {
                continue;
            }
            for &(e, was_added) in self.touched_def.get(stable_id(id)).map(Vec::as_slice).unwrap_or(&[]) {
                push(
                    out,
                    e,
                    Evidence {
                        kind: EvidenceKind::SharedDefinition,
                        from: id.to_string(),
                        to: id.to_string(),
                        detail: format!(
                            "{} {} {}, which {} {}",
                            &lc[..8],
                            if c.definitions.modified.iter().any(|m| m == id) { "modifies" } else { "renames" },
                            id,
                            &commits[e].commit[..8],
                            if was_added { "added" } else { "modified" }
                        ),
                        from_commit: lc.clone(),
                        to_commit: commits[e].commit.clone(),
                        weight: if was_added { 4.0 } else { 2.0 },
                        onto_addition: was_added,
                    },
                );
            }
        }
    }

    /// `calls`: references by name from the lines commit `l` added into earlier additions.
    fn calls(
        &self,
        commits: &[CommitAnalysis],
        l: usize,
        c: &CommitAnalysis,
        out: &mut BTreeMap<usize, Vec<Evidence>>,
    ) {
        let lc = &c.commit;
        for (path, idents) in &c.added_identifiers {
            let imports = c.file_imports.get(path);
            for ident in idents {
                let Some(defs) = self.added_name.get(ident.as_str()) else { continue };
                let distinct: BTreeSet<usize> = defs.iter().map(|d| d.0).collect();
                for &(e, def_id) in defs {
                    if e == l {
                        continue;
                    }
                    let def_path = def_id.split("::").next().unwrap_or("");
                    // Same file, a file importing it, or a file of the same directory
                    // (a package in several languages) links the use to the definition.
                    let dir = |p: &str| p.rsplit_once('/').map_or("", |x| x.0).to_string();
                    let linked =
                        def_path == path || imports.is_some_and(|i| i.contains(def_path)) || dir(def_path) == dir(path);
                    let by_name = !linked && ident.len() >= 6 && distinct.len() <= 2;
                    if !linked && !by_name {
                        continue;
                    }
                    push(
                        out,
                        e,
                        Evidence {
                            kind: EvidenceKind::Calls,
                            from: path.clone(),
                            to: def_id.to_string(),
                            detail: format!(
                                "{path} in {} names `{ident}`{}",
                                &lc[..8],
                                if linked { "" } else { " (by name only)" }
                            ),
                            from_commit: lc.clone(),
                            to_commit: commits[e].commit.clone(),
                            weight: if linked { 3.0 } else { 1.5 },
                            onto_addition: true,
                        },
                    );
                }
            }
        }
    }

    /// `imports`: imports commit `l` added of files an earlier commit added.
    fn imports(
        &self,
        commits: &[CommitAnalysis],
        l: usize,
        c: &CommitAnalysis,
        out: &mut BTreeMap<usize, Vec<Evidence>>,
    ) {
        for imp in &c.imports_added {
            if let Some(&e) = self.added_file.get(imp.to.as_str()) {
                if e != l {
                    push(
                        out,
                        e,
                        Evidence {
                            kind: EvidenceKind::Imports,
                            from: imp.from.clone(),
                            to: imp.to.clone(),
                            detail: format!("{} imports {}, added by {}", imp.from, imp.to, &commits[e].commit[..8]),
                            from_commit: c.commit.clone(),
                            to_commit: commits[e].commit.clone(),
                            weight: 2.0,
                            onto_addition: true,
                        },
                    );
                }
            }
        }
    }

    /// `shared_file`: non-test source files `c` changes (the last few earlier commits touching each).
    fn shared_files(&self, commits: &[CommitAnalysis], c: &CommitAnalysis, out: &mut BTreeMap<usize, Vec<Evidence>>) {
        for f in c.files.iter().filter(|f| f.language.is_some() && !f.is_test) {
            for &e in self.touched_file.get(f.path.as_str()).map(Vec::as_slice).unwrap_or(&[]).iter().rev().take(8) {
                push(
                    out,
                    e,
                    Evidence {
                        kind: EvidenceKind::SharedFile,
                        from: f.path.clone(),
                        to: f.path.clone(),
                        detail: format!("both change {}", f.path),
                        from_commit: c.commit.clone(),
                        to_commit: commits[e].commit.clone(),
                        weight: 1.0,
                        onto_addition: false,
                    },
                );
            }
        }
    }

    /// Index commit `l` for the commits after it.
    fn record(&mut self, l: usize, c: &'a CommitAnalysis) {
        for id in &c.definitions.added {
            self.touched_def.entry(stable_id(id)).or_default().push((l, true));
            if !c.test_defs.contains(id) {
                if let Some(name) = c.names.get(id) {
                    self.added_name.entry(name).or_default().push((l, id));
                }
            }
        }
        for r in &c.definitions.renamed {
            self.touched_def.entry(stable_id(&r.to)).or_default().push((l, false));
            if let Some(name) = c.names.get(&r.to) {
                self.added_name.entry(name).or_default().push((l, &r.to));
            }
        }
        for id in &c.definitions.modified {
            self.touched_def.entry(stable_id(id)).or_default().push((l, false));
        }
        for f in &c.files {
            if f.status == crate::analysis::FileStatus::Added {
                self.added_file.insert(&f.path, l);
            }
            if f.language.is_some() && !f.is_test {
                self.touched_file.entry(&f.path).or_default().push(l);
            }
        }
    }
}

/// A commit that can be a stage at all: it changes feature code (a non-test definition).
fn has_feature_code(c: &CommitAnalysis) -> bool {
    let non_test = |id: &String| !c.test_defs.contains(id);
    c.definitions.added.iter().any(non_test)
        || c.definitions.modified.iter().any(non_test)
        || c.definitions.renamed.iter().any(|r| !c.test_defs.contains(&r.to))
}

/// A sweeping change: too many files or modified definitions to be one stage of a feature.
fn is_sweeping(c: &CommitAnalysis, opts: &MineOptions) -> bool {
    c.files.len() > opts.max_stage_files || c.definitions.modified.len() > opts.max_stage_modified
}

/// Search candidates: global beam search, then anchor-guided search.
fn candidates(
    commits: &[CommitAnalysis],
    graph: &EvidenceGraph,
    opts: &MineOptions,
) -> Vec<(Vec<usize>, f64, &'static str)> {
    let mut out: BTreeMap<Vec<usize>, (f64, &'static str)> = BTreeMap::new();
    let later: Vec<Vec<usize>> = {
        let mut v = vec![Vec::new(); commits.len()];
        for (l, m) in graph.edges.iter().enumerate() {
            for &e in m.keys() {
                v[e].push(l);
            }
        }
        v
    };
    let usable = |i: usize| has_feature_code(&commits[i]) && !is_sweeping(&commits[i], opts);
    let extend = |beam: &[(Vec<usize>, f64)], builds_only: bool| -> Vec<(Vec<usize>, f64)> {
        let mut next: BTreeMap<Vec<usize>, f64> = BTreeMap::new();
        for (chain, score) in beam {
            let mut succ: BTreeSet<usize> = BTreeSet::new();
            for &s in chain {
                succ.extend(later[s].iter().copied().filter(|&n| n > *chain.last().unwrap_or(&0) && usable(n)));
            }
            for n in succ {
                if builds_only
                    && !chain.iter().any(|&s| {
                        graph.edges[n]
                            .get(&s)
                            .is_some_and(|ev| ev.iter().any(|x| x.kind.builds_on() && x.onto_addition))
                    })
                {
                    continue;
                }
                let w = graph.link(chain, n);
                if w > 0.0 {
                    let mut c = chain.clone();
                    c.push(n);
                    next.insert(c, score + w);
                }
            }
        }
        let mut v: Vec<(Vec<usize>, f64)> = next.into_iter().collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v
    };
    // Global beam search.
    let mut beam: Vec<(Vec<usize>, f64)> =
        (0..commits.len()).filter(|&i| usable(i) && !later[i].is_empty()).map(|i| (vec![i], 0.0)).collect();
    for _ in 1..opts.max_stages {
        let mut next = extend(&beam, false);
        next.truncate(opts.beam_width);
        if next.is_empty() {
            break;
        }
        for (c, s) in &next {
            out.entry(c.clone()).or_insert((*s, "beam"));
        }
        beam = next;
    }
    // Anchor-guided search: from commits adding feature code with new tests.
    for a in 0..commits.len() {
        let c = &commits[a];
        if !(usable(a) && !c.tests.added.is_empty() && !c.definitions.added.is_empty()) {
            continue;
        }
        let mut beam = vec![(vec![a], 0.0)];
        for _ in 1..opts.max_stages {
            let mut next = extend(&beam, true);
            next.truncate(4);
            if next.is_empty() {
                break;
            }
            for (c, s) in &next {
                out.entry(c.clone()).or_insert((*s, "anchor"));
            }
            beam = next;
        }
    }
    let mut v: Vec<(Vec<usize>, f64, &'static str)> = out.into_iter().map(|(c, (s, by))| (c, s, by)).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| b.0.len().cmp(&a.0.len())).then_with(|| a.0.cmp(&b.0)));
    v
}

/// Why `chain` is not a same-feature chain, or `None` when it is.
fn reject_reason(
    commits: &[CommitAnalysis],
    graph: &EvidenceGraph,
    chain: &[usize],
    opts: &MineOptions,
) -> Option<String> {
    if chain.len() < opts.min_stages || chain.len() > opts.max_stages {
        return Some(format!("{} stages; chains have {}–{}", chain.len(), opts.min_stages, opts.max_stages));
    }
    // Non-test definitions the chain's stages added or modified so far (names).
    let mut feature_names: BTreeSet<&str> = BTreeSet::new();
    for (k, &i) in chain.iter().enumerate() {
        let c = &commits[i];
        if !c.changes_tests() {
            return Some(format!("stage {k} ({}) adds or changes no tests", c.short()));
        }
        if !has_feature_code(c) {
            return Some(format!("stage {k} ({}) changes no feature code, only tests", c.short()));
        }
        let own: BTreeSet<&str> =
            c.names.iter().filter(|(id, _)| !c.test_defs.contains(*id)).map(|(_, n)| n.as_str()).collect();
        let test_idents: BTreeSet<&str> = c.test_identifiers.iter().map(String::as_str).collect();
        // Stage 0's tests exercise its own code; a later stage's tests exercise the feature
        // the earlier stages built (not only code of its own).
        let exercised = if k == 0 { &own } else { &feature_names };
        if !test_idents.iter().any(|t| exercised.contains(t)) {
            return Some(if k == 0 {
                format!("stage 0 ({})'s tests name nothing its code defines", c.short())
            } else {
                format!("stage {k} ({})'s tests name nothing earlier stages of the chain defined", c.short())
            });
        }
        // The feature: what stage 0 wrote (added or changed) and what later stages added.
        if k == 0 {
            feature_names.extend(own);
        } else {
            feature_names.extend(
                c.definitions
                    .added
                    .iter()
                    .filter(|id| !c.test_defs.contains(*id))
                    .filter_map(|id| c.names.get(id))
                    .map(String::as_str),
            );
        }
        if k > 0 {
            let builds = chain[..k].iter().any(|&e| {
                graph.edges[i].get(&e).is_some_and(|ev| ev.iter().any(|x| x.kind.builds_on() && x.onto_addition))
            });
            if !builds {
                return Some(format!(
                    "stage {k} ({}) builds on no code an earlier stage added (linked by shared files or modified code only)",
                    c.short()
                ));
            }
        }
    }
    None
}

fn slug(name: &str) -> String {
    let mut s = String::new();
    for ch in name.chars() {
        if ch.is_ascii_uppercase() && !s.is_empty() && !s.ends_with('-') {
            s.push('-');
        }
        if ch.is_ascii_alphanumeric() {
            s.push(ch.to_ascii_lowercase());
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    let s: String = s.trim_matches('-').chars().take(32).collect();
    if s.is_empty() { "feature".into() } else { s.trim_end_matches('-').to_string() }
}

fn summarize(
    commits: &[CommitAnalysis],
    graph: &EvidenceGraph,
    chain: &[usize],
    by: &str,
    score: f64,
    opts: &MineOptions,
) -> Chain {
    let mut stages = Vec::new();
    let mut earlier_files: BTreeSet<String> = BTreeSet::new();
    let mut shares = Vec::new();
    for (k, &i) in chain.iter().enumerate() {
        let c = &commits[i];
        let files: Vec<String> = c.files.iter().map(|f| f.path.clone()).collect();
        if k > 0 && !files.is_empty() {
            let shared = files.iter().filter(|f| earlier_files.contains(*f)).count();
            shares.push(shared as f64 / files.len() as f64);
        }
        earlier_files.extend(files.iter().cloned());
        let mut evidence: Vec<Evidence> =
            chain[..k].iter().flat_map(|&e| graph.edges[i].get(&e).cloned().unwrap_or_default()).collect();
        evidence.sort_by(|a, b| {
            a.to_commit.cmp(&b.to_commit).then(a.kind.cmp(&b.kind)).then(a.from.cmp(&b.from)).then(a.to.cmp(&b.to))
        });
        let non_test =
            |ids: &[String]| -> Vec<String> { ids.iter().filter(|d| !c.test_defs.contains(*d)).cloned().collect() };
        stages.push(StageSummary {
            index: k,
            commits: vec![c.commit.clone()],
            title: c.summary.clone(),
            definitions_added: non_test(&c.definitions.added),
            definitions_modified: non_test(&c.definitions.modified),
            tests_added: c.tests.added.clone(),
            tests_modified: c.tests.modified.clone(),
            files,
            lines: c.lines_changed(),
            evidence,
        });
    }
    let first = &commits[chain[0]];
    let name = first
        .definitions
        .added
        .iter()
        .filter(|d| !first.test_defs.contains(*d))
        .filter_map(|d| first.names.get(d))
        .next()
        .cloned()
        .unwrap_or_else(|| first.summary.clone());
    let final_commit = &commits[*chain.last().unwrap_or(&0)].commit;
    let mut h = Sha256::new();
    for &i in chain {
        h.update(commits[i].commit.as_bytes());
    }
    let hash = hex::encode(h.finalize());
    let chain_id =
        format!("{}.{}.{}.{}", opts.repo_name.replace('/', "__"), &final_commit[..8], slug(&name), &hash[..8]);
    let shared_file_share = if shares.is_empty() {
        0.0
    } else {
        (shares.iter().sum::<f64>() / shares.len() as f64 * 1000.0).round() / 1000.0
    };
    Chain {
        chain_id,
        score: (score * 100.0).round() / 100.0,
        found_by: by.to_string(),
        stages,
        shared_file_share,
        review: None,
    }
}

/// Mine same-feature chains from an analysed history.
pub fn mine_history(history: &History, opts: &MineOptions) -> MineReport {
    let started = std::time::Instant::now();
    let commits = &history.commits;
    let graph = EvidenceGraph::build(commits);
    let cands = candidates(commits, &graph, opts);
    let mut kept: Vec<(Vec<usize>, Chain)> = Vec::new();
    let mut discarded = Vec::new();
    for (chain, score, by) in &cands {
        let reason = reject_reason(commits, &graph, chain, opts).or_else(|| {
            kept.iter().find(|(k, _)| k.iter().any(|i| chain.contains(i))).map(|(k, c)| {
                let shared: Vec<&str> = chain.iter().filter(|i| k.contains(i)).map(|&i| commits[i].short()).collect();
                format!("shares {} with the better-scoring chain {}", shared.join(", "), c.chain_id)
            })
        });
        match reason {
            Some(reason) => discarded.push(Discarded {
                commits: chain.iter().map(|&i| commits[i].commit.clone()).collect(),
                found_by: by.to_string(),
                reason,
            }),
            None => {
                let c = summarize(commits, &graph, chain, by, *score, opts);
                kept.push((chain.clone(), c));
            }
        }
    }
    let mut chains: Vec<Chain> = kept.into_iter().map(|(_, c)| c).collect();
    chains.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.chain_id.cmp(&b.chain_id)));
    let discarded_total = discarded.len();
    discarded.truncate(opts.max_discarded);
    MineReport {
        version: 1,
        repo: opts.repo_name.clone(),
        range: history.range.clone(),
        commits: commits.len(),
        edges: graph.edge_count(),
        candidates: cands.len(),
        sweeping: commits.iter().filter(|c| is_sweeping(c, opts)).map(|c| c.commit.clone()).collect(),
        chains,
        discarded_total,
        discarded,
        analysis_seconds: history.stats.seconds,
        mining_seconds: started.elapsed().as_secs_f64(),
    }
}

/// Analyse `range` of the repository at `path` and mine it.
pub fn mine(
    path: &std::path::Path,
    range: &str,
    opts: &MineOptions,
) -> Result<(History, MineReport), crate::HistoryError> {
    let repo = crate::git::Repo::open(path)?;
    let history = crate::analysis::analyze(&repo, range, None)?;
    let report = mine_history(&history, opts);
    Ok((history, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slug_splits_camel_case_and_punctuation() {
        assert_eq!(slug("runAndWait"), "run-and-wait");
        assert_eq!(slug("upload_files"), "upload-files");
        assert_eq!(slug("::"), "feature");
    }
}
