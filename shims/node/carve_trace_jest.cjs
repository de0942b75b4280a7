// carve's tracing set-up file for jest (added to `setupFilesAfterEnv` by carve's runner when
// $CARVE_EXTRA_SETUP names it, before the project's own set-up files). It creates the test
// file's recorder (each test file runs in its own realm) and switches the current test in
// `beforeEach` / `afterEach`, with the id carve's jest reporter gives the test: `path >
// describe > test`, relative to $CARVE_ROOT. jest-circus (jest 27+) keeps the running test,
// with its describe blocks as parents, under the realm's JEST_STATE_SYMBOL; under the legacy
// jasmine runner only `expect.getState()` is left, whose name joins the titles with spaces.
"use strict";
const { relative, sep } = require("node:path");

const rt = require("./carve_trace_runtime.cjs").runtime("jest");
const root = process.env.CARVE_ROOT || process.cwd();
const ROOT_BLOCK = "ROOT_DESCRIBE_BLOCK";

// jest-circus's state key is a local `Symbol("JEST_STATE_SYMBOL")`: found by its description.
let stateKey;
function circusState() {
  if (stateKey === undefined) stateKey = Object.getOwnPropertySymbols(globalThis).find((s) => s.description === "JEST_STATE_SYMBOL") || null;
  return stateKey ? globalThis[stateKey] : undefined;
}

function titles() {
  const state = circusState();
  const test = state && state.currentlyRunningTest;
  if (test) {
    const names = [];
    for (let t = test; t && !(t.parent === undefined && t.name === ROOT_BLOCK); t = t.parent) names.unshift(t.name);
    return names;
  }
  const name = expect.getState().currentTestName;
  return name ? [name] : undefined;
}

beforeEach(() => {
  const names = titles();
  const file = expect.getState().testPath;
  if (names && file) rt.begin([relative(root, file).split(sep).join("/"), ...names].join(" > "));
});
afterEach(() => rt.finish());
afterAll(() => rt.close());
