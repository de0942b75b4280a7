// carve's preload for every Node process of a traced run (NODE_OPTIONS=--require <this>).
// In a process a running test started ($CARVE_CURRENT_TEST names the test), it creates the
// recorder before the process's main module loads, and everything the process runs is
// recorded under that test. Elsewhere it does nothing.
"use strict";
if (process.env.CARVE_CURRENT_TEST && process.env.CARVE_NODE_PROBES) {
  require("./carve_trace_runtime.cjs").runtime("child");
}
