#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a short, bounded time each
# (FUZZTIME, default 3s), one target at a time as `go test -fuzz` requires.
# The checked-in seed corpora (testdata/fuzz/<Target>/) also run as plain
# tests in `make unit`; this adds fresh coverage-guided inputs on top.
# New crashers are written to testdata/fuzz/ by the Go tool: commit them
# with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-3s}
status=0
while IFS= read -r line; do
  file=${line%%:*}
  target=$(sed -E 's/.*func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$line")
  pkg=./$(dirname "$file")
  echo "fuzz $pkg $target ($FUZZTIME)"
  if ! $GO test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg" >/tmp/caravan-fuzz.$$ 2>&1; then
    cat /tmp/caravan-fuzz.$$
    status=1
  fi
done < <(git ls-files '*_test.go' | xargs grep -H -E '^func Fuzz[A-Za-z0-9_]*\(' | sort)
rm -f /tmp/caravan-fuzz.$$
exit $status
