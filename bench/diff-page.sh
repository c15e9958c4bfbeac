#!/bin/sh
# bench/diff-page.sh BUILDDIR: how fast the page of `gerewrite diff --html`
# opens in headless Chromium (make bench-diff-page; never in make check).
#
# The model: bench/diff_page_gen.lua, 1,002 ops in 200 scopes.  Two
# rewrites of it: insert_noise after the last op only (few differences:
# most scopes stay collapsed) and after every Conv2D (every scope holds a
# difference, so both pictures draw every op: 1,002 and 2,002).  For
# each: the time to write the page (gerewrite, Graphviz's layout
# included), its size, and over RUNS openings (default 5) the time the
# page itself reports (#gd-status: from the start of navigation to the
# end of its script, which lays the page out) and the wall time of the
# whole `chromium --headless --dump-dom` (browser start included).
set -eu
b=$(cd "${1:-.}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-5}
ge="$b/src/gerewrite"
browser=${GE_CHROMIUM:-chromium}
command -v "$browser" >/dev/null 2>&1 || { echo "bench-diff-page: no $browser"; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gerewrite-bench-page.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
"$ge" "$top/bench/diff_page_gen.lua" "$tmp/a.pb"
"$ge" run insert_noise "$tmp/a.pb" -o "$tmp/few.pb" --param types=Softmax 2>/dev/null
"$ge" run insert_noise "$tmp/a.pb" -o "$tmp/all.pb" 2>/dev/null
echo "commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %9s %9s %12s %14s\n' case write_s page_KB in_page_ms chromium_wall_s
for c in few all; do
	t0=$(now)
	"$ge" diff "$tmp/a.pb" "$tmp/$c.pb" --html "$tmp/$c.html" >/dev/null || true
	t1=$(now)
	kb=$(( $(wc -c <"$tmp/$c.html") / 1024 ))
	ms="" walls=""
	i=0
	while [ $i -lt "$runs" ]; do
		t2=$(now)
		"$browser" --headless --disable-gpu --no-sandbox --no-first-run \
			--user-data-dir="$tmp/chromium" --dump-dom \
			"file://$tmp/$c.html" 2>/dev/null >"$tmp/dom"
		t3=$(now)
		m=$(sed -n 's/.*id="gd-status">ok (\([0-9]*\) ms).*/\1/p' "$tmp/dom")
		ms="$ms ${m:-fail}"
		walls="$walls $(echo "$t3 - $t2" | bc)"
		i=$((i + 1))
	done
	printf '%-6s %9.2f %9s %12s %14s\n' "$c" "$(echo "$t1 - $t0" | bc)" "$kb" \
		"$(echo $ms | tr ' ' '\n' | sort -n | sed -n '1p;$p' | paste -sd- -)" \
		"$(echo $walls | tr ' ' '\n' | sort -n | sed -n '1p;$p' | paste -sd- -)"
done
