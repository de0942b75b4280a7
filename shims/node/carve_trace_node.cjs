// carve's tracing set-up file for node:test (preloaded with `--require` into every test
// file's process by carve's runner when $CARVE_EXTRA_SETUP names it). It creates the
// process's recorder before the test file loads and switches the current test in global
// `beforeEach` / `afterEach` hooks, which node:test runs around every test and subtest,
// with the id carve's node:test reporter gives the test: `path > suite > test` (the file
// relative to $CARVE_ROOT, then the context's `fullName`; Node before 20.16 has only
// `name`, so nested tests are then named by their own title alone).
"use strict";
const { relative, sep } = require("node:path");

// `node --test` preloads this into its own process too, which only runs the files' processes.
const orchestrator = !process.env.NODE_TEST_CONTEXT && process.execArgv.some((a) => a === "--test" || a.startsWith("--test="));
const rt = orchestrator ? undefined : require("./carve_trace_runtime.cjs").runtime("node-test");
const root = process.env.CARVE_ROOT || process.cwd();
const file = process.argv[1] ? relative(root, process.argv[1]).split(sep).join("/") : "<unknown>";

let test;
try {
  if (orchestrator) throw new Error("not a test file's process");
  test = require("node:test");
} catch {
  test = undefined;
}
if (test && typeof test.beforeEach === "function" && rt.enabled) {
  test.beforeEach((t) => rt.begin(`${file} > ${t.fullName || t.name}`));
  test.afterEach((t) => rt.finish(t && t.passed === false ? "failed" : undefined));
  process.on("beforeExit", () => rt.close());
}
