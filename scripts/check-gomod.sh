#!/usr/bin/env bash
# Checks go.mod's direct requirements against what the module imports:
# every module a package (or its tests) imports is required directly, and
# every direct requirement is imported somewhere. `go mod tidy` cannot be
# the check here: it fails on a test import deep in Nomad's dependencies,
# and `go mod tidy -e` re-resolves that missing package against whatever
# the proxy serves that day, so its answer drifts.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
self=$($GO list -m)
imported=$($GO list -e -f '{{join .Imports "\n"}}
{{join .TestImports "\n"}}
{{join .XTestImports "\n"}}' ./... | sort -u | grep -v '^$' |
  xargs $GO list -e -f '{{if .Module}}{{.Module.Path}}{{end}}' | sort -u | grep -vx "$self" || true)
direct=$($GO mod edit -json | $GO run ./scripts/gomoddirect 2>/dev/null || true)
status=0
for m in $imported; do
  grep -qx "$m" <<<"$direct" || { echo "go.mod: $m is imported but not a direct requirement (drop its // indirect)"; status=1; }
done
for m in $direct; do
  grep -qx "$m" <<<"$imported" || { echo "go.mod: $m is a direct requirement but imported nowhere (mark it // indirect or drop it)"; status=1; }
done
[ $status = 0 ] && echo "go.mod: direct requirements match the imports"
exit $status
