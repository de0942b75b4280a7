#!/bin/sh
# Oracle agent for `carve arc run` tests: applies the gold patch of the current stage from
# $ORACLE_GOLD/stages/<k>/gold.patch — a copy of the bundle's gold patches the test makes and
# passes on with `--agent-env ORACLE_GOLD` (the bundle itself is hidden from the agent).
# Checks carve's hand-over: spec and workspace as arguments and in the environment.
set -eu
[ "$1" = "$CARVE_SPEC" ] && [ "$2" = "$CARVE_WORKSPACE" ] && [ "$(pwd -P)" = "$(cd "$CARVE_WORKSPACE" && pwd -P)" ] || {
  echo "oracle: unexpected arguments or working directory: $* in $(pwd)" >&2; exit 3; }
[ -s "$CARVE_SPEC" ] && [ -s "$CARVE_CONTRACT" ] || { echo "oracle: no spec or contract" >&2; exit 3; }
[ -n "${AGENT_LOG:-}" ] && echo "$CARVE_STAGE" >> "$AGENT_LOG"
git apply "$ORACLE_GOLD/stages/$CARVE_STAGE/gold.patch"
