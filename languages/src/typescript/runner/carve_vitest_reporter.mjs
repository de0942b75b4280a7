// carve's progress reporter for vitest 0.6-3 (ESM; loaded with --reporter=<this file>, or before
// vitest 0.10 as an object from carve's configuration file, carve_vitest_config.mjs).
// Appends one JSON object per line to $CARVE_PROGRESS as the run goes: the tests of each
// collected file, each test's start and result, files that failed to load, the end of the
// session. carve's watchdog reads it to see progress and to know which test was running
// when it had to kill the run; the final statuses come from vitest's own JSON reporter.
import { appendFileSync } from "node:fs";
import { relative, sep } from "node:path";

const out = process.env.CARVE_PROGRESS;

function emit(event) {
  if (out) appendFileSync(out, JSON.stringify(event) + "\n");
}

function rel(root, file) {
  return relative(root, file).split(sep).join("/");
}

// vitest 1+ keeps a result's errors in `errors`, vitest 0.x one in `error`.
function errorsOf(result) {
  if (!result) return [];
  return result.errors || (result.error ? [result.error] : []);
}

function message(errors) {
  const e = (errors || [])[0];
  if (!e) return undefined;
  return String(e.message || e.name || e).split("\n")[0];
}

export default class CarveVitestReporter {
  onInit(ctx) {
    this.ctx = ctx;
    // Ids are relative to the tree carve runs (CARVE_ROOT), even when the config moves
    // vitest's own root elsewhere.
    this.root = process.env.CARVE_ROOT || ctx.config.root;
    this.started = new Set();
    emit({ event: "header", version: 1, runner: "vitest" });
    // carve's progress set-up file, and first of all any extra set-up files (the tracing
    // shim's, which must run before anything loads the project's modules).
    const extra = (process.env.CARVE_EXTRA_SETUP || "").split("\n").filter(Boolean);
    const setups = [...extra, process.env.CARVE_VITEST_SETUP].filter(Boolean).reverse();
    for (const setup of setups) {
      for (const project of ctx.projects || [ctx]) {
        const config = project.config;
        if (config && Array.isArray(config.setupFiles) && !config.setupFiles.includes(setup)) config.setupFiles.unshift(setup);
      }
    }
  }

  id(task) {
    const names = [];
    const file = task.file;
    // vitest 1.1 puts an unnamed suite between a file and its tests: it is no part of the id.
    for (let t = task; t && t !== file && t.type !== "file"; t = t.suite) if (t.name !== "" || t.type !== "suite") names.unshift(t.name);
    if (!file) return names.join(" > ");
    return [rel(this.root, file.filepath), ...names].join(" > ");
  }

  onCollected(files) {
    for (const file of files || []) {
      const ids = [];
      const walk = (task) => {
        if (task.type === "test" || task.type === "custom") ids.push(this.id(task));
        for (const child of task.tasks || []) walk(child);
      };
      walk(file);
      emit({ event: "collected", file: rel(this.root, file.filepath), ids });
      if (file.result && file.result.state === "fail" && ids.length === 0) {
        emit({ event: "collect_error", file: rel(this.root, file.filepath), message: message(errorsOf(file.result)) ?? "failed to load" });
      }
    }
  }

  // vitest 3: a test is about to run (vitest 1-2 send the "run" state in onTaskUpdate).
  onTestCaseReady(testCase) {
    const task = testCase && testCase.task;
    if (!task) return;
    const id = this.id(task);
    if (!this.started.has(id)) {
      this.started.add(id);
      emit({ event: "start", id });
    }
  }

  onTaskUpdate(packs) {
    for (const [taskId, result] of packs || []) {
      const task = this.ctx.state.idMap.get(taskId);
      if (!task || !result) continue;
      if (task.type !== "test" && task.type !== "custom") {
        if (!task.suite && result.state === "fail" && errorsOf(result).length) {
          emit({ event: "file_error", file: rel(this.root, task.filepath), message: message(errorsOf(result)) });
        }
        continue;
      }
      const id = this.id(task);
      if (result.state === "run" && !this.started.has(id)) {
        this.started.add(id);
        emit({ event: "start", id });
      } else if (["pass", "fail", "skip", "todo"].includes(result.state)) {
        const status = { pass: "passed", fail: "failed", skip: "skipped", todo: "skipped" }[result.state];
        emit({ event: "result", id, status, duration: result.duration, message: message(errorsOf(result)) });
      }
    }
  }

  onFinished(files, errors) {
    if (errors && errors.length) emit({ event: "run_error", message: message(errors) });
    emit({ event: "finished" });
  }
}
