//! Line bookkeeping for Python masking: which whole lines a deletion takes (with attached
//! comments), and how the blank lines around a run of deleted lines collapse.
//!
//! Blank-line rule: a run of deleted lines and the blank lines touching it becomes
//! `before` blank lines when the run opens its block (the kept code after it moves up),
//! `after` when it closes its block (the spacing to what follows the block survives),
//! `max(before, after)` in the middle of a block (the wider of the two spacings survives:
//! two blank lines between top-level definitions, one between methods), and nothing at the
//! end of the file. A run that carries a `pass` keeps `before`, the `pass`, then `after`.

use std::collections::BTreeMap;

use crate::edit::Edit;

pub(super) struct Lines<'s> {
    source: &'s str,
    starts: Vec<usize>,
}

impl<'s> Lines<'s> {
    pub(super) fn new(source: &'s str) -> Lines<'s> {
        let mut starts = vec![0];
        for (i, b) in source.bytes().enumerate() {
            if b == b'\n' && i + 1 < source.len() {
                starts.push(i + 1);
            }
        }
        Lines { source, starts }
    }

    pub(super) fn count(&self) -> usize {
        self.starts.len()
    }

    pub(super) fn start(&self, row: usize) -> usize {
        self.starts.get(row).copied().unwrap_or(self.source.len())
    }

    pub(super) fn end_incl_newline(&self, row: usize) -> usize {
        self.starts.get(row + 1).copied().unwrap_or(self.source.len())
    }

    /// The line's text without its line ending.
    pub(super) fn text(&self, row: usize) -> &'s str {
        let s = &self.source[self.start(row)..self.end_incl_newline(row)];
        s.trim_end_matches(['\n', '\r'])
    }

    pub(super) fn is_blank(&self, row: usize) -> bool {
        self.text(row).trim().is_empty()
    }

    pub(super) fn indent_text(&self, row: usize) -> &'s str {
        let t = self.text(row);
        &t[..t.len() - t.trim_start_matches([' ', '\t']).len()]
    }

    fn row_of(&self, byte: usize) -> usize {
        match self.starts.binary_search(&byte) {
            Ok(r) => r,
            Err(r) => r.saturating_sub(1),
        }
    }

    pub(super) fn only_space_before(&self, byte: usize) -> bool {
        let s = self.start(self.row_of(byte));
        self.source.get(s..byte).is_some_and(|t| t.chars().all(|c| c == ' ' || c == '\t'))
    }

    pub(super) fn only_space_or_comment_after(&self, byte: usize) -> bool {
        let row = self.row_of(byte);
        if byte > 0 && byte == self.start(row) {
            return true;
        }
        let end = self.end_incl_newline(row);
        let rest = self.source.get(byte.min(end)..end).unwrap_or("").trim();
        rest.is_empty() || rest.starts_with('#')
    }

    pub(super) fn newline(&self) -> &'static str {
        if self.source.contains("\r\n") { "\r\n" } else { "\n" }
    }

    fn is_comment_line(&self, row: usize) -> bool {
        self.text(row).trim_start().starts_with('#')
    }

    /// A shebang or encoding declaration, which belongs to the file, not to a definition.
    fn is_file_header(&self, row: usize) -> bool {
        let t = self.text(row).trim_start();
        row < 2 && (t.starts_with("#!") || (t.starts_with('#') && t.contains("coding")))
    }

    /// First row of the comment lines directly above `row` (no blank line between) at
    /// exactly `indent`; `row` itself when there are none.
    pub(super) fn attached_comments_start(&self, row: usize, indent: &str) -> usize {
        let mut first = row;
        while first > 0 {
            let r = first - 1;
            if self.is_comment_line(r) && self.indent_text(r) == indent && !self.is_file_header(r) {
                first = r;
            } else {
                break;
            }
        }
        first
    }

    /// Last row of the comment lines directly below `row` indented deeper than
    /// `indent_len` (the tail of a body); `row` itself when there are none.
    pub(super) fn trailing_comments_end(&self, row: usize, indent_len: usize) -> usize {
        let mut last = row;
        while last + 1 < self.count() {
            let r = last + 1;
            if self.is_comment_line(r) && self.indent_text(r).len() > indent_len {
                last = r;
            } else {
                break;
            }
        }
        last
    }
}

/// Whole lines to delete, collected before they are turned into edits.
pub(super) struct LineRange {
    deleted: Vec<bool>,
    /// At the first row of each marked range: whether it opens its block.
    at_start: BTreeMap<usize, bool>,
    /// At the last row of each marked range: whether it closes its block.
    at_end: BTreeMap<usize, bool>,
    /// `pass` lines (their indentation) to put where a marked range starts.
    passes: BTreeMap<usize, Vec<String>>,
}

impl LineRange {
    pub(super) fn new(count: usize) -> LineRange {
        LineRange {
            deleted: vec![false; count],
            at_start: BTreeMap::new(),
            at_end: BTreeMap::new(),
            passes: BTreeMap::new(),
        }
    }

    pub(super) fn mark(
        &mut self,
        first: usize,
        last: usize,
        at_start: bool,
        at_end: bool,
        pass_indent: Option<String>,
    ) {
        let e = self.at_end.entry(last).or_insert(at_end);
        *e = *e || at_end;
        for r in first..=last.min(self.deleted.len().saturating_sub(1)) {
            self.deleted[r] = true;
        }
        let e = self.at_start.entry(first).or_insert(at_start);
        *e = *e || at_start;
        if let Some(i) = pass_indent {
            self.passes.entry(first).or_default().push(i);
        }
    }

    pub(super) fn edits(&self, lines: &Lines) -> Vec<Edit> {
        let n = self.deleted.len();
        let nl = lines.newline();
        let mut edits = Vec::new();
        let mut i = 0;
        while i < n {
            if !(self.deleted[i] || lines.is_blank(i)) {
                i += 1;
                continue;
            }
            let seg_start = i;
            while i < n && (self.deleted[i] || lines.is_blank(i)) {
                i += 1;
            }
            let seg_end = i - 1;
            let Some(first_del) = (seg_start..=seg_end).find(|r| self.deleted[*r]) else { continue };
            let last_del = (seg_start..=seg_end).rev().find(|r| self.deleted[*r]).unwrap_or(first_del);
            let before = first_del - seg_start;
            let after = seg_end - last_del;
            let eof = seg_end + 1 == n;
            let at_start = self.at_start.get(&first_del).copied().unwrap_or(false);
            let at_end = self.at_end.get(&last_del).copied().unwrap_or(false);
            let passes: Vec<&String> = self.passes.range(seg_start..=seg_end).flat_map(|(_, v)| v).collect();
            let (b1, b2) = if !passes.is_empty() {
                (before, if eof { 0 } else { after })
            } else if eof {
                (0, 0)
            } else if at_start {
                (before, 0)
            } else if at_end {
                (after, 0)
            } else {
                (before.max(after), 0)
            };
            let mut text = nl.repeat(b1);
            for p in passes {
                text.push_str(p);
                text.push_str("pass");
                text.push_str(nl);
            }
            text.push_str(&nl.repeat(b2));
            edits.push(Edit::replace(lines.start(seg_start), lines.end_incl_newline(seg_end), text));
        }
        edits
    }
}
