#!/usr/bin/env bash
# pair.sh A B [test flags]: runs two builds of the churn benchmark in
# turns and compares their decisions one by one (pair_test.go).
#
# A and B are scalebench test binaries (go test -c -o A
# ./scheduler/policy/scalebench/), say the build before a change and
# after it, each built with pair_test.go. The benchmark's own variables
# choose what runs; keep it to one ordering and one size
# (CARAVAN_SCALE_POLICIES, CARAVAN_SCALE_SIZES). Extra arguments go to
# both binaries, e.g. -test.benchtime 60x. Run from this directory.
#
# It runs the pair twice, each build taking the first turn once, and
# prints each build's p50 and p99 over both runs' timed decisions, the
# median of B's time over A's for the same decision, and how many of
# B's decisions were the faster of their pair; with PAIR_TAIL=<ms>, the
# same over the pairs where either build took longer than that.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: pair.sh A B [test flags]" >&2; exit 2; }
a=$(realpath "$1") b=$(realpath "$2")
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() { # binary, fifo to wait on, fifo to pass to, log
	CARAVAN_SCALE_CHURN_LOG=1 CARAVAN_SCALE_PAIR_WAIT=$2 CARAVAN_SCALE_PAIR_PASS=$3 \
		"$1" -test.run '^$' -test.bench ScaleChurn -test.v "${@:5}" >"$4" 2>&1
}
# pair first second: one paired run, the first taking the first turn
pair() {
	run "$1" "$dir/p" "$dir/q" "$dir/$3.log" "${@:5}" &
	local p1=$!
	run "$2" "$dir/q" "$dir/p" "$dir/$4.log" "${@:5}" &
	local p2=$!
	printf x >"$dir/p"
	wait "$p1" || { cat "$dir/$3.log" >&2; exit 1; }
	wait "$p2" || { cat "$dir/$4.log" >&2; exit 1; }
}
mkfifo "$dir/p" "$dir/q"
# twice, each build taking the first turn once, so that any edge one
# order gives cancels out
pair "$a" "$b" a1 b1 "$@"
pair "$b" "$a" b2 a2 "$@"

# each decision's wall time in ms, from the last (timed) run's log lines
times() {
	awk '/ decision [0-9]+: / {
		i = $0; sub(/.* decision /, "", i); sub(/:.*/, "", i)
		d = $0; sub(/.* decision [0-9]+: /, "", d); sub(/,.*/, "", d)
		v = d + 0
		if (d ~ /µs$/) v /= 1000; else if (d ~ /ns$/) v /= 1e6; else if (d ~ /[0-9]s$/) v *= 1000
		if (i == 0) n = 0
		t[n++] = v
	} END { for (k = 0; k < n; k++) print t[k] }' "$1"
}
for x in a b; do
	times "$dir/${x}1.log" >"$dir/$x.ms"
	times "$dir/${x}2.log" >>"$dir/$x.ms"
done
# the q-quantile of a column of numbers
quant() { sort -g | awk -v q="$1" '{ v[n++] = $1 } END { if (n) print v[int(q * (n - 1) + 0.5)] }'; }
paste "$dir/a.ms" "$dir/b.ms" | awk 'NF == 2 { print $2 / $1 }' >"$dir/ratio"
n=$(wc -l <"$dir/ratio")
[ "$n" -gt 0 ] || { echo "no paired decisions" >&2; exit 1; }
won=$(awk '$1 < 1' "$dir/ratio" | wc -l)
for x in a b; do
	f=$dir/$x.ms
	printf '%s: p50 %.2f p99 %.2f ms\n' "$(basename "${!x}")" "$(quant 0.5 <"$f")" "$(quant 0.99 <"$f")"
done
printf '%s/%s per decision: median %.3f (quartiles %.3f-%.3f), %s faster in %d of %d\n' \
	"$(basename "$b")" "$(basename "$a")" "$(quant 0.5 <"$dir/ratio")" "$(quant 0.25 <"$dir/ratio")" \
	"$(quant 0.75 <"$dir/ratio")" "$(basename "$b")" "$won" "$n"
# PAIR_TAIL=ms: the same over the pairs where either build took longer
# (the tail, which a few slow decisions make: a median over all hides it)
if [ -n "${PAIR_TAIL:-}" ]; then
	paste "$dir/a.ms" "$dir/b.ms" | awk -v t="$PAIR_TAIL" 'NF == 2 && ($1 > t || $2 > t) { print $2 / $1 }' >"$dir/tail"
	m=$(wc -l <"$dir/tail")
	if [ "$m" -gt 0 ]; then
		printf 'over %s ms: median %.3f in %d pairs, %s faster in %d\n' "$PAIR_TAIL" "$(quant 0.5 <"$dir/tail")" "$m" \
			"$(basename "$b")" "$(awk '$1 < 1' "$dir/tail" | wc -l)"
	else
		echo "over $PAIR_TAIL ms: no pairs"
	fi
fi
