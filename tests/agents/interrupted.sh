#!/bin/sh
# The oracle, except that its first attempt at stage 1 starts a background process, writes
# both process ids to $INTERRUPT_MARK and waits to be killed (the test kills carve there and
# checks that neither process outlives it).
set -eu
if [ "$CARVE_STAGE" = 1 ] && [ ! -e "$INTERRUPT_MARK" ]; then
  echo "$CARVE_STAGE" >> "$AGENT_LOG"
  sleep 120 >/dev/null 2>&1 &
  echo "$$ $!" > "$INTERRUPT_MARK.tmp"
  mv "$INTERRUPT_MARK.tmp" "$INTERRUPT_MARK"
  exec sleep 120
fi
exec "$(dirname "$0")/oracle.sh" "$@"
