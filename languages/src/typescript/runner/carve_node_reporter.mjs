// carve's reporter for node:test (Node 18.17+/20+; loaded with --test-reporter=<this file>
// and --test-reporter-destination=<progress file>). Yields one JSON object per line: each
// test's real start (test:dequeue), each test's result under its full name (file > suite >
// test, from the nesting of test:start events, which come in report order), files whose
// process failed, the end of the run. Suites (describe) get no result of their own.
import { relative, sep } from "node:path";

const root = process.env.CARVE_ROOT || process.cwd();

function rel(file) {
  return file ? relative(root, file).split(sep).join("/") : "<unknown>";
}

function firstLine(error) {
  if (!error) return undefined;
  const e = error.cause && error.code === "ERR_TEST_FAILURE" ? error.cause : error;
  return String((e && e.message) || e).trim().split("\n")[0];
}

export default async function* carveNodeReporter(source) {
  yield JSON.stringify({ event: "header", version: 1, runner: "node-test" }) + "\n";
  const reported = new Map(); // file -> names by nesting, for test:start/pass/fail
  const running = new Map(); // file -> names by nesting, for test:dequeue
  const path = (stacks, data) => {
    const file = rel(data.file);
    const stack = stacks.get(file) || [];
    stack.length = data.nesting;
    stack[data.nesting] = data.name;
    stacks.set(file, stack);
    return [file, ...stack.slice(0, data.nesting + 1)].join(" > ");
  };
  for await (const { type, data } of source) {
    if (!data || typeof data.nesting !== "number") continue;
    const isFile = data.nesting === 0 && data.file && data.name === data.file;
    if (type === "test:dequeue") {
      if (isFile) yield JSON.stringify({ event: "file_start", file: rel(data.file) }) + "\n";
      else yield JSON.stringify({ event: "start", id: path(running, data) }) + "\n";
    } else if (type === "test:start") {
      if (!isFile) path(reported, data);
    } else if (type === "test:pass" || type === "test:fail") {
      const details = data.details || {};
      if (isFile) {
        if (type === "test:fail") {
          yield JSON.stringify({ event: "file_error", file: rel(data.file), message: firstLine(details.error) || "the test file failed" }) + "\n";
        }
        continue;
      }
      const stack = reported.get(rel(data.file)) || [];
      stack.length = data.nesting;
      stack[data.nesting] = data.name;
      reported.set(rel(data.file), stack);
      if (details.type === "suite") {
        if (type === "test:fail") {
          const id = [rel(data.file), ...stack.slice(0, data.nesting + 1)].join(" > ");
          yield JSON.stringify({ event: "suite_error", id, message: firstLine(details.error) }) + "\n";
        }
        continue;
      }
      const id = [rel(data.file), ...stack.slice(0, data.nesting + 1)].join(" > ");
      let status = type === "test:pass" ? "passed" : "failed";
      if (data.skip !== undefined && data.skip !== false) status = "skipped";
      if (data.todo !== undefined && data.todo !== false) status = "skipped";
      const message = status === "skipped" ? (typeof data.skip === "string" ? data.skip : typeof data.todo === "string" ? data.todo : undefined) : firstLine(details.error);
      yield JSON.stringify({ event: "result", id, status, duration: details.duration_ms, message }) + "\n";
    }
  }
  yield JSON.stringify({ event: "finished" }) + "\n";
}
