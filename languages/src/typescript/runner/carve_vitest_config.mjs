// carve's configuration file for vitest before 0.10, which cannot load a reporter from a
// file (`--reporter=<path>` stops with "Unknown reporter") but takes reporter objects in its
// configuration. carve writes this file into its own run directory with the paths filled in
// and passes `--config <this file>`: it loads the project's own configuration file (the one
// vitest would have found, or the one the project's command names) with the project's vite,
// then adds carve's progress reporter object next to the JSON and verbose ones, and carve's
// set-up files before the project's (vitest 0.x reads `setupFiles` before a reporter's onInit,
// where newer vitest gets them).
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const ROOT = __CARVE_ROOT__;
const PROJECT_CONFIG = __CARVE_PROJECT_CONFIG__;
const REPORTER = __CARVE_REPORTER__;

export default async (env) => {
  let config = {};
  if (PROJECT_CONFIG) {
    const vite = createRequire(pathToFileURL(ROOT + "/package.json"))("vite");
    const loaded = await vite.loadConfigFromFile(env, PROJECT_CONFIG, ROOT);
    config = (loaded && loaded.config) || {};
  }
  const Reporter = (await import(pathToFileURL(REPORTER).href)).default;
  const test = config.test || (config.test = {});
  test.reporters = [new Reporter(), "json", "verbose"];
  const extra = (process.env.CARVE_EXTRA_SETUP || "").split("\n").filter(Boolean);
  const carve = [...extra, process.env.CARVE_VITEST_SETUP].filter(Boolean);
  const own = test.setupFiles == null ? [] : [].concat(test.setupFiles);
  test.setupFiles = [...carve, ...own.filter((f) => !carve.includes(f))];
  return config;
};
