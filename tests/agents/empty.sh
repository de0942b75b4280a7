#!/bin/sh
# Empty agent for `carve arc run` tests: changes nothing.
[ -n "${AGENT_LOG:-}" ] && echo "$CARVE_STAGE" >> "$AGENT_LOG"
exit 0
