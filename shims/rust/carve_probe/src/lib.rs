//! carve's Rust tracing runtime (docs/trace-format.md, "Running a traced cargo test").
//!
//! carve copies this crate beside a shadow copy of the project, writes `src/table.rs` (node
//! ids, file names, the crate name -> test-id label of every test target), adds it to every
//! probed package as a path dependency and inserts, on the line of each function body's
//! opening brace:
//!
//! - `let __carve_g = carve_probe::enter(N);` in the project's functions and methods (and
//!   block closures, with the number of the definition they are written in): records that N
//!   ran in the current test and, on its first `CARVE_FIRST_HITS` calls per test, its caller
//!   (the top of a per-thread shadow stack of node numbers); pushes N until the guard drops;
//! - `carve_probe::frame(N)` in test code (`#[cfg(test)]` modules, `tests/*.rs`): pushes
//!   N only, so test functions and helpers are named as callers;
//! - `carve_probe::hit(N);` in `async fn`s: the hit and caller only (a guard would live
//!   across `.await`s and move between threads);
//! - `carve_probe::import(K)` in closures written in a `static` initialiser (`LazyLock`,
//!   `OnceLock::get_or_init` in a static's closure …): while it runs, everything is recorded
//!   under `<import>` with `<module>PATH` as the first caller.
//!
//! Attribution: libtest runs every test on a thread named after it, so a thread's first
//! probe reads its name once and keeps one slot (stack, counts, record) for its life: the
//! hot path touches one thread-local per call. A thread with no name (spawned by a test) or
//! named `main` records under the test whose thread last started (carve runs tests one at
//! a time); a doctest process (not a libtest thread) records under the id it finds for
//! itself (see `doctest_id`), or nothing. Test ids are
//! `<label>::<thread name>`, `label` being carve's name for the running test binary's target
//! (read from the executable's name), or `<lib>::doctest::<name>` in a doctest binary.
//! A test thread's record is written when the thread exits; what is left (spawned threads
//! that outlived their test, `<import>`) and the `end` record are written at process exit
//! (`atexit`). Tracing is off (each probe one thread-local read) unless `CARVE_TRACE_DIR`
//! is set.

#![allow(unknown_lints, clippy::all, dead_code)]

mod table;

use std::cell::{Cell, UnsafeCell};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Mutex, Once};

use table::{FILES, LABELS, LIBS, NODES, ROOT};

const EXTERNAL: i32 = -1;
const IMPORT: &str = "<import>";

#[derive(Default)]
struct Data {
    hits: BTreeSet<u32>,
    edges: BTreeSet<(i32, u32)>,
}

impl Data {
    fn merge(&mut self, other: Data) {
        self.hits.extend(other.hits);
        self.edges.extend(other.edges);
    }
    fn is_empty(&self) -> bool {
        self.hits.is_empty() && self.edges.is_empty()
    }
}

/// One thread's state. Leaked: guards and the exit handler may read it at any time.
struct Slot {
    /// The test this thread records under; empty: record nothing.
    test: String,
    /// A libtest test thread (its exit ends the test's record).
    named: bool,
    stack: UnsafeCell<Vec<i32>>,
    counts: UnsafeCell<Vec<u8>>,
    import: Cell<u32>,
    data: Mutex<Data>,
}

thread_local! {
    static SLOT: Cell<*const Slot> = const { Cell::new(std::ptr::null()) };
    static FLUSH: Flush = const { Flush };
}

/// The slot of a thread for which tracing is off.
fn off() -> *const Slot {
    std::ptr::NonNull::<Slot>::dangling().as_ptr()
}

static CONFIG: Once = Once::new();
static ENABLED: AtomicBool = AtomicBool::new(false);
/// Captures per callee per test; 255: every call (exact mode).
static LIMIT: AtomicU8 = AtomicU8::new(4);
static EXACT: AtomicBool = AtomicBool::new(false);
static DIR: Mutex<String> = Mutex::new(String::new());
static CURRENT: Mutex<Option<String>> = Mutex::new(None);
static SLOTS: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static IMPORTS: Mutex<Option<Data>> = Mutex::new(None);
static RECORDS: Mutex<BTreeMap<String, Data>> = Mutex::new(BTreeMap::new());
static OUT: Mutex<Option<Writer>> = Mutex::new(None);
static ENDED: AtomicBool = AtomicBool::new(false);

struct Writer {
    file: std::fs::File,
    tests: BTreeSet<String>,
}

/// Pops the shadow stack back to where it was at the probe (so a frame an unwinding panic
/// skipped goes too).
pub struct Frame {
    slot: *const Slot,
    depth: usize,
    import: bool,
}

impl Drop for Frame {
    #[inline]
    fn drop(&mut self) {
        if self.slot.is_null() {
            return;
        }
        // SAFETY: slots are leaked and their stack is only used by their own thread; a
        // Frame is not Send (raw pointer), so it drops on the thread that made it.
        unsafe {
            let s = &*self.slot;
            (*s.stack.get()).truncate(self.depth);
            if self.import {
                s.import.set(s.import.get().saturating_sub(1));
            }
        }
    }
}

#[inline]
fn slot() -> *const Slot {
    let s = SLOT.with(|c| c.get());
    if s.is_null() {
        new_slot()
    } else {
        s
    }
}

const NONE: Frame = Frame { slot: std::ptr::null(), depth: 0, import: false };

/// Pushes `entry` onto this thread's shadow stack, then hands `then` the thread's slot and
/// the caller (the entry below): the frame that pops it, or [`NONE`] when tracing is off.
#[inline]
fn push(entry: i32, import: bool, then: impl FnOnce(&Slot, i32)) -> Frame {
    let s = slot();
    if s == off() {
        return NONE;
    }
    // SAFETY: see Frame::drop.
    unsafe {
        let slot = &*s;
        let stack = &mut *slot.stack.get();
        let depth = stack.len();
        let caller = stack.last().copied().unwrap_or(EXTERNAL);
        stack.push(entry);
        then(slot, caller);
        Frame { slot: s, depth, import }
    }
}

/// Entry of node `n`: its hit, its caller, a frame.
#[inline]
pub fn enter(n: u32) -> Frame {
    // SAFETY: see Frame::drop.
    push(n as i32, false, |slot, caller| unsafe { record(slot, caller, n) })
}

/// Entry of test code `n`: a frame only (it names callers; tests are not hits).
#[inline]
pub fn frame(n: u32) -> Frame {
    push(n as i32, false, |_, _| {})
}

/// Entry of an `async fn` `n`: its hit and caller, no frame.
#[inline]
pub fn hit(n: u32) {
    let s = slot();
    if s == off() {
        return;
    }
    unsafe {
        let slot = &*s;
        let caller = (*slot.stack.get()).last().copied().unwrap_or(EXTERNAL);
        record(slot, caller, n);
    }
}

/// Entry of a closure in a `static` initialiser of file `file` (its index in the table):
/// what runs until the guard drops is `<import>`.
pub fn import(file: u32) -> Frame {
    push(-2 - file as i32, true, |slot, _| slot.import.set(slot.import.get() + 1))
}

#[inline]
unsafe fn record(slot: &Slot, caller: i32, n: u32) {
    if slot.import.get() > 0 {
        let mut imports = IMPORTS.lock().unwrap_or_else(|e| e.into_inner());
        let d = imports.get_or_insert_with(Data::default);
        d.hits.insert(n);
        d.edges.insert((caller, n));
        return;
    }
    let counts = &mut *slot.counts.get();
    let Some(c) = counts.get_mut(n as usize) else { return };
    let limit = LIMIT.load(Ordering::Relaxed);
    if *c < limit {
        if limit != u8::MAX {
            *c += 1;
        }
        if slot.test.is_empty() {
            return;
        }
        let mut d = slot.data.lock().unwrap_or_else(|e| e.into_inner());
        d.hits.insert(n);
        d.edges.insert((caller, n));
    }
}

#[cold]
#[inline(never)]
fn new_slot() -> *const Slot {
    CONFIG.call_once(configure);
    if !ENABLED.load(Ordering::Relaxed) {
        SLOT.with(|c| c.set(off()));
        return off();
    }
    let name = std::thread::current().name().map(str::to_string);
    let (label, doctest) = binary_label();
    let (test, named) = match name {
        Some(n) if n != "main" => {
            let id = if doctest { stable_doctest_id(format!("{label}::doctest::{n}")) } else { format!("{label}::{n}") };
            (id, true)
        }
        _ if doctest => {
            let id = doctest_id(&label).unwrap_or_default();
            if !id.is_empty() {
                // Threads the doctest spawns record under it too.
                *lock(&CURRENT) = Some(id.clone());
            }
            (id, false)
        }
        _ => (lock(&CURRENT).clone().unwrap_or_else(|| IMPORT.to_string()), false),
    };
    if named {
        *lock(&CURRENT) = Some(test.clone());
    }
    let slot: &'static Slot = Box::leak(Box::new(Slot {
        test,
        named,
        stack: UnsafeCell::new(Vec::with_capacity(64)),
        counts: UnsafeCell::new(vec![0; NODES.len()]),
        import: Cell::new(0),
        data: Mutex::new(Data::default()),
    }));
    lock(&SLOTS).push(slot as *const Slot as usize);
    SLOT.with(|c| c.set(slot));
    // Registers the thread-exit hook.
    FLUSH.with(|_| ());
    slot
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

extern "C" {
    fn atexit(cb: extern "C" fn()) -> i32;
}

fn configure() {
    let dir = std::env::var("CARVE_TRACE_DIR").unwrap_or_default();
    if dir.is_empty() {
        return;
    }
    *lock(&DIR) = dir;
    if std::env::var("CARVE_TRACE_MODE").map_or(false, |m| m == "exact") {
        EXACT.store(true, Ordering::Relaxed);
        LIMIT.store(u8::MAX, Ordering::Relaxed);
    } else if let Some(n) = std::env::var("CARVE_FIRST_HITS").ok().and_then(|v| v.parse::<u8>().ok()) {
        LIMIT.store(n.clamp(1, 254), Ordering::Relaxed);
    }
    ENABLED.store(true, Ordering::Relaxed);
    // SAFETY: registering a plain C callback.
    unsafe {
        atexit(at_exit);
    }
}

/// The id of the doctest this process runs (`<lib>::doctest::<path> - <item>`), from the
/// list carve's runner hands over in `CARVE_DOCTESTS` (`rustdoc's id<TAB>carve's id` a
/// line). rustdoc runs each doctest as a program of its own (edition < 2024), and two
/// things name it:
///
/// - the `_doctest_main_<path, every non-alphanumeric as _>_<line>_<n>` function rustdoc
///   wraps an example without a `fn main` in, read once from a backtrace on the process's
///   first probe: its file and line are exactly those of rustdoc's name;
/// - for an example with its own `fn main` (no such frame), the note carve's linker
///   wrapper (`carve-doctest-link`, see carve's Rust shim) wrote beside the binary when
///   rustdoc linked it, `<binary>.carve-doctest`: rustdoc's `UNSTABLE_RUSTDOC_TEST_PATH`
///   and `UNSTABLE_RUSTDOC_TEST_LINE`, the example's line less the lines rustdoc put above
///   it; the id is the doctest of that file whose line is the nearest at or after it.
///
/// `None` (nothing recorded) when neither names a listed doctest, or when a spawned thread
/// probes first.
#[cold]
fn doctest_id(lib: &str) -> Option<String> {
    let list = std::env::var("CARVE_DOCTESTS").ok()?;
    let prefix = format!("{lib}::doctest::");
    // (file, line, carve's id) of each listed doctest of this library.
    let listed: Vec<(&str, u64, &str)> = list
        .lines()
        .filter_map(|l| {
            let (raw, stable) = l.split_once('\t').unwrap_or((l, l));
            let name = raw.strip_prefix(prefix.as_str())?;
            let file = name.split(" - ").next()?;
            let at = name.rfind(" (line ")? + " (line ".len();
            let line = name[at..].split(')').next()?.parse().ok()?;
            Some((file, line, stable))
        })
        .collect();
    let trace = std::backtrace::Backtrace::force_capture().to_string();
    if let Some(at) = trace.find("_doctest_main_") {
        let symbol = trace[at + "_doctest_main_".len()..].split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next()?;
        let mut parts = symbol.rsplitn(3, '_');
        let (_n, line, path) = (parts.next()?, parts.next()?.parse::<u64>().ok()?, parts.next()?);
        let mangle = |f: &str| -> String { f.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect() };
        return listed.iter().find(|(f, l, _)| *l == line && mangle(f) == path).map(|(_, _, s)| s.to_string());
    }
    let (path, line) = linked_doctest()?;
    listed
        .iter()
        .filter(|(f, l, _)| *f == path && (*l as i64) >= line && (*l as i64) - line <= MAX_DOCTEST_OFFSET)
        .min_by_key(|(_, l, _)| *l)
        .map(|(_, _, s)| s.to_string())
}

/// The most lines rustdoc puts above an example with its own `fn main` (its `allow`
/// attribute, the crate's `doc(test(attr(…)))` attributes, `extern crate`).
const MAX_DOCTEST_OFFSET: i64 = 16;

/// The file and line carve's linker wrapper noted beside this doctest binary.
fn linked_doctest() -> Option<(String, i64)> {
    let exe = std::env::current_exe().ok()?;
    let mut note = exe.into_os_string();
    note.push(".carve-doctest");
    let text = std::fs::read_to_string(note).ok()?;
    let (path, line) = text.trim_end().split_once('\t')?;
    Some((path.to_string(), line.trim().parse().ok()?))
}

/// carve's id of a doctest rustdoc runs on a libtest thread (merged doctests, edition
/// 2024), from the `CARVE_DOCTESTS` list; the name itself when it is not listed.
#[cold]
fn stable_doctest_id(raw: String) -> String {
    let list = std::env::var("CARVE_DOCTESTS").unwrap_or_default();
    let found = list.lines().find_map(|l| l.split_once('\t').filter(|(r, _)| *r == raw).map(|(_, s)| s.to_string()));
    found.unwrap_or(raw)
}

/// carve's label of the running test binary's target, and whether it is a doctest.
fn binary_label() -> (String, bool) {
    let exe = std::env::current_exe().ok();
    let stem = exe.as_ref().and_then(|p| p.file_stem()).and_then(|s| s.to_str()).unwrap_or("").to_string();
    // cargo names test binaries `<crate name>-<16 hex digits>`.
    let name = match stem.rsplit_once('-') {
        Some((n, h)) if h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()) => n.to_string(),
        _ => stem.clone(),
    };
    if name == "rust_out" || std::env::var_os("UNSTABLE_RUSTDOC_TEST_PATH").is_some() {
        // The library under doctest: cargo's variables reach rustdoc's doctest processes
        // (a workspace has several libraries; the first is only the fallback).
        let lib = ["CARGO_CRATE_NAME", "CARGO_PKG_NAME"]
            .iter()
            .filter_map(|v| std::env::var(v).ok())
            .map(|n| n.replace('-', "_"))
            .find_map(|n| LIBS.iter().find(|l| **l == n).map(|l| l.to_string()))
            .or_else(|| LIBS.first().map(|l| l.to_string()))
            .unwrap_or(name);
        return (lib, true);
    }
    let label = LABELS.iter().find(|(c, _)| *c == name).map(|(_, l)| l.to_string()).unwrap_or(name);
    (label, false)
}

/// Runs when a thread that probed exits: a test thread's record is written.
struct Flush;

impl Drop for Flush {
    fn drop(&mut self) {
        let s = SLOT.with(|c| c.get());
        if s.is_null() || s == off() {
            return;
        }
        let slot = unsafe { &*s };
        let data = std::mem::take(&mut *lock(&slot.data));
        if slot.test.is_empty() || ENDED.load(Ordering::Relaxed) {
            return;
        }
        let mut records = lock(&RECORDS);
        records.entry(slot.test.clone()).or_default().merge(data);
        if slot.named {
            let mut current = lock(&CURRENT);
            if current.as_deref() == Some(slot.test.as_str()) {
                *current = None;
            }
            drop(current);
            let data = records.remove(&slot.test).unwrap_or_default();
            drop(records);
            write_imports();
            write_test(&slot.test, &data);
        }
    }
}

extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(finish);
}

/// Writes what is left and the `end` record (once).
fn finish() {
    if ENDED.swap(true, Ordering::SeqCst) {
        return;
    }
    let slots: Vec<usize> = lock(&SLOTS).clone();
    let mut records = std::mem::take(&mut *lock(&RECORDS));
    for p in slots {
        let slot = unsafe { &*(p as *const Slot) };
        let data = std::mem::take(&mut *lock(&slot.data));
        if !slot.test.is_empty() && !data.is_empty() {
            records.entry(slot.test.clone()).or_default().merge(data);
        }
    }
    write_imports();
    for (id, data) in &records {
        if !data.is_empty() {
            write_test(id, data);
        }
    }
    let mut out = lock(&OUT);
    if let Some(w) = out.as_mut() {
        let tests = w.tests.iter().filter(|t| *t != IMPORT).count();
        let _ = writeln!(w.file, "{{\"kind\": \"end\", \"tests\": {tests}}}");
        let _ = w.file.flush();
    }
}

fn write_imports() {
    let data = lock(&IMPORTS).take();
    if let Some(d) = data {
        if !d.is_empty() {
            write_test(IMPORT, &d);
        }
    }
}

fn name(code: i32) -> String {
    if code >= 0 {
        NODES.get(code as usize).map(|s| s.to_string()).unwrap_or_else(|| "<external>".into())
    } else if code == EXTERNAL {
        "<external>".to_string()
    } else {
        FILES.get((-2 - code) as usize).map(|f| format!("<module>{f}")).unwrap_or_else(|| "<external>".into())
    }
}

fn write_test(id: &str, data: &Data) {
    let hits: BTreeSet<&str> = data.hits.iter().filter_map(|n| NODES.get(*n as usize).copied()).collect();
    let edges: BTreeSet<(String, String)> = data.edges.iter().map(|(c, n)| (name(*c), name(*n as i32))).collect();
    let mut line = String::from("{\"kind\": \"test\", \"test\": ");
    quote(&mut line, id);
    line.push_str(", \"hits\": [");
    for (i, h) in hits.iter().enumerate() {
        if i > 0 {
            line.push_str(", ");
        }
        quote(&mut line, h);
    }
    line.push_str("], \"edges\": [");
    for (i, (c, n)) in edges.iter().enumerate() {
        if i > 0 {
            line.push_str(", ");
        }
        line.push('[');
        quote(&mut line, c);
        line.push_str(", ");
        quote(&mut line, n);
        line.push(']');
    }
    line.push_str("]}\n");
    let mut out = lock(&OUT);
    if out.is_none() {
        *out = open();
    }
    if let Some(w) = out.as_mut() {
        let _ = w.file.write_all(line.as_bytes());
        w.tests.insert(id.to_string());
    }
}

fn open() -> Option<Writer> {
    let dir = lock(&DIR).clone();
    std::fs::create_dir_all(&dir).ok()?;
    let pid = std::process::id();
    let mut n = 0;
    let file = loop {
        let path = std::path::Path::new(&dir).join(format!("{pid}-{n}.jsonl"));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(f) => break f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n += 1,
            Err(_) => return None,
        }
    };
    let mut w = Writer { file, tests: BTreeSet::new() };
    let mode = if EXACT.load(Ordering::Relaxed) { "exact" } else { "first-hits" };
    let limit = LIMIT.load(Ordering::Relaxed);
    let mut header = format!(
        "{{\"kind\": \"header\", \"version\": 1, \"pid\": {pid}, \"native\": true, \"mode\": \"{mode}\", \"first_hits\": {limit}, \"role\": \"cargo-test\", \"root\": "
    );
    quote(&mut header, ROOT);
    header.push_str(", \"argv\": [");
    for (i, a) in std::env::args().enumerate() {
        if i > 0 {
            header.push_str(", ");
        }
        quote(&mut header, &a);
    }
    header.push_str("]}\n");
    w.file.write_all(header.as_bytes()).ok()?;
    Some(w)
}

/// A JSON string literal.
fn quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}
