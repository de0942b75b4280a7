// carve's tracing set-up file for vitest (put first in every project's `setupFiles` by
// carve's reporter when $CARVE_EXTRA_SETUP names it). It creates the realm's recorder
// before any probed module loads and switches the current test in `beforeEach` /
// `afterEach`, with the id carve's reporter gives the test (`path > describe > test`,
// relative to $CARVE_ROOT). The `afterAll` of each test file writes the file's `end`.
import { afterAll, afterEach, beforeEach } from "vitest";
import { createRequire } from "node:module";
import { relative, sep } from "node:path";

const require = createRequire(import.meta.url);
// carve names the runtime's path: vite-node before vitest 0.10 gives a set-up file outside the
// project root a wrong import.meta.url (the root joined with the file's path).
const rt = require(process.env.CARVE_NODE_RUNTIME || "./carve_trace_runtime.cjs").runtime("vitest");
const root = process.env.CARVE_ROOT || process.cwd();

function id(task) {
  const names = [];
  const file = task.file;
  // vitest 1.1 puts an unnamed suite between a file and its tests: it is no part of the id.
  for (let t = task; t && t !== file && t.type !== "file"; t = t.suite) if (t.name !== "" || t.type !== "suite") names.unshift(t.name);
  const path = file ? relative(root, file.filepath).split(sep).join("/") : "";
  return [path, ...names].join(" > ");
}

// The running test: vitest 1+ passes a context with `task` (or `meta`), 0.x the task itself.
function taskOf(ctx) {
  if (!ctx) return undefined;
  return ctx.task || ctx.meta || (ctx.type === "test" ? ctx : undefined);
}

beforeEach((ctx) => {
  const task = taskOf(ctx);
  if (task) rt.begin(id(task));
});
afterEach((ctx) => {
  const task = taskOf(ctx);
  const state = task && task.result && task.result.state;
  // Only a failure is final here (vitest settles a pass after every hook ran).
  rt.finish(state === "fail" ? "failed" : undefined);
});
afterAll(() => rt.close());
