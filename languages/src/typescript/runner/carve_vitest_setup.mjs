// carve's per-test progress inside vitest's workers (a setup file carve's reporter adds to
// each project's `setupFiles`). It writes synchronously when a test starts and ends, so a
// test that blocks its worker (a busy loop) still leaves its start in $CARVE_PROGRESS,
// where vitest's own reporting from the worker is batched and would never arrive.
import { afterEach, beforeEach } from "vitest";
import { appendFileSync } from "node:fs";
import { relative, sep } from "node:path";

const out = process.env.CARVE_PROGRESS;
const root = process.env.CARVE_ROOT || process.cwd();

function id(task) {
  const names = [];
  const file = task.file;
  // vitest 1.1 puts an unnamed suite between a file and its tests: it is no part of the id.
  for (let t = task; t && t !== file && t.type !== "file"; t = t.suite) if (t.name !== "" || t.type !== "suite") names.unshift(t.name);
  const path = file ? relative(root, file.filepath).split(sep).join("/") : "";
  return [path, ...names].join(" > ");
}

function emit(event, ctx) {
  // vitest 1+ passes a context with `task`, 0.x the task itself.
  const task = ctx && (ctx.task || (ctx.type === "test" ? ctx : undefined));
  if (out && task) appendFileSync(out, JSON.stringify({ event, id: id(task) }) + "\n");
}

beforeEach((ctx) => emit("start", ctx));
afterEach((ctx) => emit("end", ctx));
