// carve's progress reporter for jest (CommonJS; loaded with --reporters=<this file>).
// Appends one JSON object per line to $CARVE_PROGRESS as the run goes: each file's start,
// each test's start (jest 29.6+) and result, each file's tests once it finished, files
// that failed to run, the end of the session. carve's watchdog reads it to see progress
// and to know which test or file was running when it had to kill the run; the final
// statuses come from jest's own JSON report (--json --outputFile).
const { appendFileSync } = require("node:fs");
const { relative, sep } = require("node:path");

const out = process.env.CARVE_PROGRESS;
const root = process.env.CARVE_ROOT || process.cwd();

function emit(event) {
  if (out) appendFileSync(out, JSON.stringify(event) + "\n");
}

function rel(file) {
  return relative(root, file).split(sep).join("/");
}

function id(file, result) {
  return [rel(file), ...(result.ancestorTitles || []), result.title].join(" > ");
}

function firstLine(text) {
  return text ? String(text).replace(/\u001b\[[0-9;]*m/g, "").trim().split("\n")[0] : undefined;
}

const STATUS = { passed: "passed", failed: "failed", skipped: "skipped", pending: "skipped", todo: "skipped", disabled: "skipped" };

class CarveJestReporter {
  onRunStart() {
    emit({ event: "header", version: 1, runner: "jest" });
  }

  onTestFileStart(test) {
    emit({ event: "file_start", file: rel(test.path) });
  }

  onTestCaseStart(test, info) {
    emit({ event: "start", id: [rel(test.path), ...(info.ancestorTitles || []), info.title].join(" > ") });
  }

  onTestCaseResult(test, result) {
    emit({ event: "result", id: id(test.path, result), status: STATUS[result.status] || "failed", duration: result.duration, message: firstLine((result.failureMessages || [])[0]) });
  }

  onTestFileResult(test, testResult) {
    const file = rel(test.path);
    const results = testResult.testResults || [];
    emit({ event: "collected", file, ids: results.map((r) => id(test.path, r)) });
    for (const r of results) {
      emit({ event: "result", id: id(test.path, r), status: STATUS[r.status] || "failed", duration: r.duration, message: firstLine((r.failureMessages || [])[0]) });
    }
    if (testResult.testExecError) {
      emit({ event: "collect_error", file, message: firstLine(testResult.testExecError.message || testResult.failureMessage) || "failed to run" });
    }
  }

  // jest before 26 (iamkun/dayjs pins 22) knows only these two names; later ones call
  // them only for a reporter without the onTestFile* ones, so nothing is reported twice.
  onTestStart(test) {
    this.onTestFileStart(test);
  }

  onTestResult(test, testResult) {
    this.onTestFileResult(test, testResult);
  }

  onRunComplete() {
    emit({ event: "finished" });
  }

  getLastError() {
    return undefined;
  }
}

module.exports = CarveJestReporter;
