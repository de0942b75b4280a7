#!/bin/sh
# Snooping agent for the sandbox test: at every stage it looks for the answers through the
# paths it is given and through absolute paths the test passes on (SNOOP_* by --agent-env),
# and writes what it could read to $HOME/snoop-<stage>.txt (HOME is the run's agent/home).
# It changes nothing in the workspace.
set -u
out="$HOME/snoop-$CARVE_STAGE.txt"
: > "$out"
note() { echo "$1" >> "$out"; }
# The bundle's gold patch by its absolute path.
if cat "$SNOOP_BUNDLE/stages/$CARVE_STAGE/gold.patch" > /dev/null 2>&1; then note "read bundle gold patch"; fi
# The run folder beside the workspace: private/ (gate copies, tracked diffs) and run.json.
if [ -n "$(ls -A "$CARVE_WORKSPACE/../private" 2>/dev/null)" ]; then note "listed private/"; fi
if [ -s "$CARVE_WORKSPACE/../run.json" ]; then note "read run.json"; fi
# The repository's history (the chain's final commit holds the gold code and tests).
if git -C "$SNOOP_REPO" log -1 > /dev/null 2>&1 || [ -n "$(ls -A "$SNOOP_REPO" 2>/dev/null)" ]; then note "read the repository"; fi
# Everything under the test's folder and every path the agent was given, searched for a line
# of the gold patch and a line of a hidden test.
for root in "$SNOOP_ROOT" "$CARVE_WORKSPACE/.." "$HOME/../.." "$TMPDIR/.." "$(dirname "$CARVE_SPEC")/../.."; do
  grep -rlF -e "$SNOOP_GOLD_LINE" -e "$SNOOP_TEST_LINE" "$root" 2>/dev/null | sed 's/^/found: /' >> "$out"
done
# Other processes' view of the disk.
for p in /proc/[0-9]*; do
  if [ -r "$p/root$SNOOP_BUNDLE/chain.json" ]; then note "read the bundle through $p/root"; break; fi
done
note "sandbox=${CARVE_SANDBOX:-unset} carve_env=${CARGO_MANIFEST_DIR:-unset}"
exit 0
