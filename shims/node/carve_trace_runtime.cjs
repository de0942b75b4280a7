// carve's tracing runtime for Node (vitest, jest, node:test): the recorder the probes that
// carve inserted into a shadow copy of the project's sources call (see
// languages/src/typescript/trace/ and docs/trace-format.md).
//
// One runtime per JavaScript realm, on `globalThis.__carve_rt`, created by a runner set-up
// file before any probed module loads. Probes call, through helpers appended to each probed
// file:
//   e(n)  entry of definition n: record a hit (first hits per test) and push a frame
//   f(n)  entry of code that only names a caller (test code, code in a class body): push
//   h(n)  entry of an async function or generator: record a hit, push nothing (a frame
//         would outlive the first `await`/`yield`)
//   x(d)  exit: the shadow stack goes back to depth d (so a frame an exception skipped is
//         dropped by the next exit below it)
//   m(k)  module top-level code starts (frame k = nodes + module number, `<module>PATH`);
//         its end calls x(d)
// The current test is switched by the runner's set-up file (`begin(id)` / `finish()`), and
// every record is appended synchronously to `$CARVE_TRACE_DIR/<pid>-<n>.jsonl`. The running
// test's id is kept in $CARVE_CURRENT_TEST, so that a Node child process the test starts
// (which preloads carve_trace_child.cjs through NODE_OPTIONS) records under that test.
"use strict";

const fs = require("node:fs");
const path = require("node:path");

const VERSION = 1;
const IMPORT = "<import>";
const STACK = 1 << 16;
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
  // Counts saturate at 255, so in exact mode every call records its caller.
  const limit = exact ? 256 : Math.max(1, Math.min(255, Number(process.env.CARVE_FIRST_HITS) || 4));

  function bucket() {
    return { count: new Uint8Array(n), edges: new Set(), dirty: false };
  }
  const imports = bucket();
  let current = imports; // the bucket probes record into
  let currentId = IMPORT;
  const outer = []; // [bucket, id] of the tests a running subtest interrupted
  const stack = new Int32Array(STACK);
  let depth = 0;
  let fd = -1;
  const ids = new Set();

  function callerName(c) {
    if (c === 0) return "<external>";
    c -= 1;
    return c < n ? nodes[c] : "<module>" + modules[c - n];
  }

  // A child process a test started (preloaded by carve_trace_child.cjs with the test's id
  // in $CARVE_CURRENT_TEST) records everything it runs, its module code included, as that
  // test's: as in Python, a child's main module is not import time.
  const inherited = role === "child" ? process.env.CARVE_CURRENT_TEST : undefined;

  function loading() {
    if (inherited) return false;
    for (let i = Math.min(depth, STACK) - 1; i >= 0; i--) if (stack[i] >= n) return true;
    return false;
  }

  // Caller numbers are shifted by one: 0 is <external>, then nodes, then module frames.
  function record(node) {
    const top = depth > 0 ? stack[Math.min(depth, STACK) - 1] + 1 : 0;
    const into = current !== imports && loading() ? imports : current;
    if (into.count[node] < 255) into.count[node]++;
    if (into !== current && current.count[node] < 255) current.count[node]++;
    into.edges.add(top * n + node);
    into.dirty = true;
  }

  const rt = {
    enabled: true,
    e(node) {
      if (current.count[node] < limit) record(node);
      if (depth < STACK) stack[depth] = node;
      return depth++;
    },
    f(node) {
      if (depth < STACK) stack[depth] = node;
      return depth++;
    },
    h(node) {
      if (current.count[node] < limit) record(node);
      return depth;
    },
    x(d) {
      depth = d;
    },
    m(frame) {
      if (depth < STACK) stack[depth] = frame;
      return depth++;
    },
    /** A test starts: what ran since the last record goes to `<import>`. A test that starts
     * while another runs (a node:test subtest) records into its own bucket until it ends. */
    begin(id) {
      if (current === imports) flush(imports, IMPORT);
      else outer.push([current, currentId]);
      current = bucket();
      currentId = id;
      process.env[CURRENT] = id; // for the child processes the test starts
    },
    /** The current test ended (after its hooks); code from now on counts as the enclosing
     * test's, or as `<import>`. */
    finish(outcome) {
      if (current !== imports) flush(current, currentId, outcome);
      const up = outer.pop();
      current = up ? up[0] : imports;
      currentId = up ? up[1] : IMPORT;
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
