// carve's reporter for mocha 6 through 11 (CommonJS; loaded with --reporter <this file>).
// Appends one JSON object per line to $CARVE_PROGRESS as the run goes: the header, every
// file's tests once mocha starts (it loads every spec file before it runs one), each test's
// start and result, tests a failing hook stops (as errors), hooks that fail after their
// tests ran, errors outside any test, the end of the run. Ids: `path > suite > … > test`, the
// file relative to $CARVE_ROOT, then the titles from the file's top suite down (the root
// suite has none) — what carve_trace_mocha.cjs gives the test too. mocha takes one reporter,
// so this one also runs mocha's own spec reporter (the project's mocha) for stdout.
"use strict";
const { appendFileSync } = require("node:fs");
const { relative, sep } = require("node:path");

const out = process.env.CARVE_PROGRESS;
const root = process.env.CARVE_ROOT || process.cwd();

function emit(event) {
  if (out) appendFileSync(out, JSON.stringify(event) + "\n");
}

function fileOf(runnable) {
  for (let r = runnable; r; r = r.parent) if (r.file) return relative(root, r.file).split(sep).join("/");
  return "<unknown>";
}

function id(runnable) {
  const names = [];
  for (let r = runnable; r && !r.root; r = r.parent) names.unshift(r.title);
  return [fileOf(runnable), ...names].join(" > ");
}

function firstLine(err) {
  if (err === undefined || err === null) return undefined;
  return String((err && err.message) || err).trim().split("\n")[0];
}

function eachTest(suite, visit) {
  for (const t of suite.tests || []) visit(t);
  for (const s of suite.suites || []) eachTest(s, visit);
}

// mocha's own spec reporter, from the project's installation (the one running).
function specReporter() {
  try {
    const mocha = require(require.resolve("mocha", { paths: [process.cwd(), root] }));
    return mocha.reporters && mocha.reporters.Spec;
  } catch {
    return undefined;
  }
}

class CarveMochaReporter {
  constructor(runner, options) {
    const Spec = specReporter();
    if (Spec) new Spec(runner, options);
    const done = new Set();
    const result = (test, status, message) => {
      done.add(test);
      emit({ event: "result", id: id(test), status, duration: test.duration, message });
    };
    // The tests mocha's --grep lets run (a failing hook stops only those).
    const selected = (test) => {
      const re = runner._grep;
      if (!(re instanceof RegExp)) return true;
      re.lastIndex = 0;
      return re.test(test.fullTitle()) !== Boolean(runner._invert);
    };
    emit({ event: "header", version: 1, runner: "mocha" });
    runner.once("start", () => {
      const files = new Map();
      eachTest(runner.suite, (t) => {
        const file = fileOf(t);
        if (!files.has(file)) files.set(file, []);
        files.get(file).push(id(t));
      });
      for (const [file, ids] of files) emit({ event: "collected", file, ids });
    });
    runner.on("test", (test) => emit({ event: "start", id: id(test) }));
    runner.on("pass", (test) => result(test, "passed"));
    runner.on("pending", (test) => result(test, "skipped"));
    runner.on("fail", (runnable, err) => {
      if (runnable.type === "test") return result(runnable, "failed", firstLine(err));
      const message = `${runnable.title}: ${firstLine(err)}`;
      if (runnable.type !== "hook" || !runnable.parent) return emit({ event: "run_error", message });
      // A failing hook stops the tests of its suite that have not run.
      let stopped = 0;
      eachTest(runnable.parent, (t) => {
        if (!done.has(t) && selected(t)) {
          result(t, "error", message);
          stopped++;
        }
      });
      if (!stopped) emit({ event: "suite_error", id: runnable.parent.root ? "<root suite>" : id(runnable.parent), message });
    });
    runner.once("end", () => emit({ event: "finished" }));
  }
}

module.exports = CarveMochaReporter;
