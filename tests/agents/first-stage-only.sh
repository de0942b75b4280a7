#!/bin/sh
# First-stage-only agent for `carve arc run` tests: the oracle at stage 0, nothing after.
set -eu
if [ "$CARVE_STAGE" = 0 ]; then
  exec "$(dirname "$0")/oracle.sh" "$@"
fi
exit 0
