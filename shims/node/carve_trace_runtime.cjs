// carve's tracing runtime for Node (vitest, jest, node:test): the recorder the probes that
// carve inserted into a shadow copy of the project's sources call (see
// languages/src/typescript/trace/ and docs/trace-format.md).
//
// One runtime per JavaScript realm, on `globalThis.__carve_rt`, created by a runner set-up
// file before any probed module loads. Probes call, through helpers appended to each probed
// file:
//   e(n)  entry of definition n: record a hit (first hits per test) and make n the current
//         frame; returns the frame it replaced
//   f(n)  entry of code that only names a caller (test code, code in a class body): the
//         same without the hit
//   h(n)  entry of an async function or generator: record a hit, change no frame (a frame
//         set there would outlive the first `await`/`yield`)
//   x(d)  exit (a return, the end of the body, or an exception passing through): the
//         current frame goes back to d, what the entry returned
//   m(k)  module top-level code starts (frame k = nodes + module number, `<module>PATH`);
//         its end calls x(d)
// The hot path touches two numbers: the current frame (`top`, a small integer: 0 is
// <external>, 1 + i node i, 1 + n + k module frame k, with the LOADING bit set from a module
// frame on, so code that runs while a module loads is known as such without a walk) and the
// current test's hit count of the callee (a Uint8Array slot); the rest (edges, `<import>`)
// happens on the first hits only.
// The current test is switched by the runner's set-up file (`begin(id)` / `finish()`), and
// every record is appended synchronously to `$CARVE_TRACE_DIR/<pid>-<n>.jsonl`. The running
// test's id is kept in $CARVE_CURRENT_TEST, so that a Node child process the test starts
// (which preloads carve_trace_child.cjs through NODE_OPTIONS) records under that test.
"use strict";

const fs = require("node:fs");
const path = require("node:path");

const VERSION = 1;
const IMPORT = "<import>";
// `top`'s LOADING bit, and the frame number below it.
const LOADING = 0x40000000; // written as a literal on the hot path
const FRAME = LOADING - 1;
const CURRENT = "CARVE_CURRENT_TEST";

function noop() {
  const zero = () => 0;
  return { e: zero, f: zero, h: zero, x() {}, m: zero, begin() {}, finish() {}, close() {}, enabled: false };
}

function create(role) {
  const tableFile = process.env.CARVE_NODE_PROBES;
  const dir = process.env.CARVE_TRACE_DIR;
  if (!tableFile || !dir) return noop();
  let table;
  try {
    table = JSON.parse(fs.readFileSync(tableFile, "utf8"));
  } catch (err) {
    process.stderr.write(`carve: cannot read the probe table ${tableFile}: ${err.message}; not tracing\n`);
    return noop();
  }
  if (table.version !== VERSION) {
    process.stderr.write(`carve: probe table ${tableFile} has version ${table.version}, this runtime reads ${VERSION}; not tracing\n`);
    return noop();
  }
  const nodes = table.nodes;
  const modules = table.modules;
  const n = nodes.length;
  const exact = process.env.CARVE_TRACE_MODE === "exact";
  // First-hits mode records the caller of a callee's first `limit` hits per test; exact mode
  // every new caller (the header still says 256: counts saturate at 255).
  const limit = exact ? 256 : Math.max(1, Math.min(255, Number(process.env.CARVE_FIRST_HITS) || 4));

  function bucket() {
    return { count: new Uint8Array(n), edges: new Set(), dirty: false };
  }
  const imports = bucket();
  let current = imports; // the bucket probes record into
  let currentId = IMPORT;
  const outer = []; // [bucket, id] of the tests a running subtest interrupted
  let fd = -1;
  const ids = new Set();
  // The hot path's state, `var`s (no TDZ checks once inlined): the current bucket's counts,
  // the current frame, and (exact mode) the frame each callee last recorded as its caller
  // in the current bucket, so that a repeated edge costs one comparison.
  var count = current.count;
  var top = 0;
  var last = exact ? new Int32Array(n).fill(-1) : undefined;
  var cap = limit;

  function callerName(c) {
    if (c === 0) return "<external>";
    c -= 1;
    return c < n ? nodes[c] : "<module>" + modules[c - n];
  }

  // A child process a test started (preloaded by carve_trace_child.cjs with the test's id
  // in $CARVE_CURRENT_TEST) records everything it runs, its module code included, as that
  // test's: as in Python, a child's main module is not import time.
  const inherited = role === "child" ? process.env.CARVE_CURRENT_TEST : undefined;

  // The slow path: a first hit of `node` (or, in exact mode, a new caller) with `d` the
  // caller's frame. Code that runs while a module loads goes to `<import>`, and its hits to
  // the running test too.
  function record(node, d) {
    const into = current !== imports && (d & LOADING) !== 0 && !inherited ? imports : current;
    if (into.count[node] < 255) into.count[node]++;
    if (into !== current && current.count[node] < 255) current.count[node]++;
    into.edges.add((d & FRAME) * n + node);
    into.dirty = true;
    if (last !== undefined) last[node] = d;
  }

  function switched() {
    count = current.count;
    if (last !== undefined) last.fill(-1);
  }

  const rt = {
    enabled: true,
    e: exact
      ? function e(node) {
          var d = top;
          top = (d & 0x40000000) | (node + 1);
          if (last[node] !== d) record(node, d);
          return d;
        }
      : function e(node) {
          var d = top;
          top = (d & 0x40000000) | (node + 1);
          if (count[node] < cap) record(node, d);
          return d;
        },
    f(node) {
      var d = top;
      top = (d & 0x40000000) | (node + 1);
      return d;
    },
    h: exact
      ? function h(node) {
          if (last[node] !== top) record(node, top);
          return 0;
        }
      : function h(node) {
          if (count[node] < cap) record(node, top);
          return 0;
        },
    x(d) {
      top = d;
    },
    m(frame) {
      var d = top;
      top = 0x40000000 | (frame + 1);
      return d;
    },
    /** A test starts: what ran since the last record goes to `<import>`. A test that starts
     * while another runs (a node:test subtest) records into its own bucket until it ends. */
    begin(id) {
      if (current === imports) flush(imports, IMPORT);
      else outer.push([current, currentId]);
      current = bucket();
      currentId = id;
      switched();
      process.env[CURRENT] = id; // for the child processes the test starts
    },
    /** The current test ended (after its hooks); code from now on counts as the enclosing
     * test's, or as `<import>`. */
    finish(outcome) {
      if (current !== imports) flush(current, currentId, outcome);
      const up = outer.pop();
      current = up ? up[0] : imports;
      currentId = up ? up[1] : IMPORT;
      switched();
      if (up) process.env[CURRENT] = currentId;
      else delete process.env[CURRENT];
    },
    /** Writes the `end` record; a later record starts a new file. */
    close() {
      while (current !== imports) rt.finish();
      flush(imports, IMPORT);
      if (fd >= 0) {
        line({ kind: "end", tests: ids.size });
        fs.closeSync(fd);
        fd = -1;
        ids.clear();
      }
    },
  };

  function open() {
    fs.mkdirSync(dir, { recursive: true });
    const thread = (() => {
      try {
        return require("node:worker_threads").threadId;
      } catch {
        return 0;
      }
    })();
    for (let i = 0; ; i++) {
      const file = path.join(dir, `${process.pid}-${thread}-${i}.jsonl`);
      try {
        fd = fs.openSync(file, "wx");
        break;
      } catch (err) {
        if (err.code !== "EEXIST") throw err;
      }
    }
    line({
      kind: "header",
      version: VERSION,
      pid: process.pid,
      node: process.version,
      native: true,
      mode: exact ? "exact" : "first-hits",
      first_hits: limit,
      role,
      argv: process.argv,
      root: table.root,
      unprobed_preloaded: [],
    });
  }

  function line(obj) {
    fs.writeSync(fd, JSON.stringify(obj) + "\n");
  }

  function flush(b, id, outcome) {
    if (id === IMPORT && !b.dirty) return;
    const hits = [];
    for (let i = 0; i < n; i++) if (b.count[i] > 0) hits.push(nodes[i]);
    const edges = [];
    for (const key of b.edges) edges.push([callerName(Math.floor(key / n)), nodes[key % n]]);
    hits.sort();
    edges.sort((a, b2) => (a[0] < b2[0] ? -1 : a[0] > b2[0] ? 1 : a[1] < b2[1] ? -1 : a[1] > b2[1] ? 1 : 0));
    if (fd < 0) open();
    const rec = { kind: "test", test: id, hits, edges };
    if (outcome) rec.outcome = outcome;
    line(rec);
    if (id !== IMPORT) ids.add(id);
    b.count.fill(0);
    b.edges.clear();
    b.dirty = false;
    if (last !== undefined) last.fill(-1);
  }

  if (inherited) rt.begin(inherited);
  process.on("exit", () => {
    try {
      rt.close();
    } catch {
      // The process is ending; a trace without `end` is reported as partial.
    }
  });
  return rt;
}

/** The realm's runtime, created on first use. */
function runtime(role) {
  if (!globalThis.__carve_rt) {
    Object.defineProperty(globalThis, "__carve_rt", { value: create(role || "process"), enumerable: false, configurable: true, writable: true });
  }
  return globalThis.__carve_rt;
}

module.exports = { runtime, IMPORT };
