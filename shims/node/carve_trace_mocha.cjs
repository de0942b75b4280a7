// carve's tracing set-up file for mocha 6 through 11 (loaded with `--file <this>` by carve's
// runner when $CARVE_EXTRA_SETUP_MOCHA names it: mocha loads it before the spec files, in the
// one process that runs every test). It creates the process's recorder before any spec file
// loads a probed module and switches the current test in root-level `beforeEach` /
// `afterEach` hooks (under the active interface's names: bdd and qunit `beforeEach`, tdd
// `setup`), with the id carve's mocha reporter gives the test: `path > suite > … > test`
// (the file relative to $CARVE_ROOT, then the titles from the file's top suite down).
"use strict";
const { relative, sep } = require("node:path");

const rt = require("./carve_trace_runtime.cjs").runtime("mocha");
const root = process.env.CARVE_ROOT || process.cwd();

function id(test) {
  const names = [];
  let file;
  for (let r = test; r && !r.root; r = r.parent) {
    names.unshift(r.title);
    file = file || r.file;
  }
  return [file ? relative(root, file).split(sep).join("/") : "<unknown>", ...names].join(" > ");
}

const before = typeof beforeEach === "function" ? beforeEach : typeof setup === "function" ? setup : undefined;
const after = typeof afterEach === "function" ? afterEach : typeof teardown === "function" ? teardown : undefined;
if (rt.enabled && before && after) {
  before(function carveTraceBegin() {
    if (this.currentTest) rt.begin(id(this.currentTest));
  });
  after(function carveTraceFinish() {
    const test = this.currentTest;
    rt.finish(test && test.state === "failed" ? "failed" : undefined);
  });
}
