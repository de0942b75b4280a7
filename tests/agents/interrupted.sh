#!/bin/sh
# The oracle, except that its first attempt at stage 1 writes its process id to
# $INTERRUPT_MARK and waits to be killed (the test kills carve and this process there).
set -eu
if [ "$CARVE_STAGE" = 1 ] && [ ! -e "$INTERRUPT_MARK" ]; then
  echo "$CARVE_STAGE" >> "$AGENT_LOG"
  echo $$ > "$INTERRUPT_MARK.tmp"
  mv "$INTERRUPT_MARK.tmp" "$INTERRUPT_MARK"
  exec sleep 120
fi
exec "$(dirname "$0")/oracle.sh" "$@"
