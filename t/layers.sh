#!/bin/sh
# layers.sh: the rules of doc/hacking.md.  Every file of lib/ is in the
# layers table there; no file of lib/ includes a header of a layer above
# its own, nor a Lua header; no file of lib/ or src/ is over 1,800 lines
# and no function over 150, but for the named debts below.
SRC=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-layers.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$SRC/t/testlib.sh"

MAX_LINES=1800
MAX_FUNC=150
# Functions over MAX_FUNC lines, known and named, with the reason they are
# not split yet: "file function reason".  Remove a line when its function
# is split; never add one to let new code grow past the limit.
DEBTS='
'

# layer of each lib/ file stem, from the table of doc/hacking.md
sed -n 's/^| \([0-9]\) [a-z]* | \(.*\) |$/\1 \2/p' "$SRC/doc/hacking.md" |
while read -r layer files; do
	echo "$files" | tr ',' '\n' | sed 's/^ *//; s/ *$//' |
	while read -r f; do
		test -n "$f" && echo "$f $layer"
	done
done > "$T/layers"
test -s "$T/layers"
ok $? "doc/hacking.md has a layers table"

layer_of() { # layer_of STEM -> the layer, or nothing
	awk -v f="$1" '$1 == f { print $2 }' "$T/layers"
}

# every file of lib/ has a layer
: > "$T/missing"
for p in "$SRC"/lib/*.c "$SRC"/lib/*.h; do
	stem=`basename "$p" | sed 's/\.[ch]$//'`
	test -n "`layer_of "$stem"`" || echo "lib/`basename "$p"`" >> "$T/missing"
done
test ! -s "$T/missing"
s=$?
ok $s "every file of lib/ is in the layers table"
test $s -eq 0 || diag "$T/missing"

# includes go down or sideways
: > "$T/up"
for p in "$SRC"/lib/*.c "$SRC"/lib/*.h; do
	base=`basename "$p"`
	mine=`layer_of "\`echo "$base" | sed 's/\.[ch]$//'\`"`
	test -n "$mine" || continue
	sed -n 's/^#include "\([a-z0-9_]*\)\.h".*/\1/p' "$p" |
	while read -r h; do
		theirs=`layer_of "$h"`
		test -n "$theirs" || continue # generated: config.h
		if test "$theirs" -gt "$mine"; then
			echo "lib/$base (layer $mine) includes $h.h (layer $theirs)"
		fi
	done >> "$T/up"
done
test ! -s "$T/up"
s=$?
ok $s "no file of lib/ includes a header of a layer above its own"
test $s -eq 0 || diag "$T/up"

# a private header (_impl.h) names in its first comment every file that
# includes it, and nothing outside lib/ includes one
: > "$T/impl"
for h in "$SRC"/lib/*_impl.h; do
	hb=`basename "$h"`
	sed -n '1,/\*\//p' "$h" > "$T/comment"
	for f in `grep -l "#include \"$hb\"" "$SRC"/lib/*.c "$SRC"/lib/*.h`; do
		fb=`basename "$f"`
		grep -q "$fb" "$T/comment" ||
			echo "lib/$fb includes $hb, whose comment does not name it"
	done
	grep -l "#include \"$hb\"" "$SRC"/src/*.c "$SRC"/src/*.h \
		"$SRC"/t/*.c "$SRC"/t/*.h 2>/dev/null |
		sed "s|^$SRC/||; s|\$| includes lib/$hb|"
done >> "$T/impl"
test ! -s "$T/impl"
s=$?
ok $s "each private header names who includes it, all in lib/"
test $s -eq 0 || diag "$T/impl"

# the graph layer reaches the layers above only through its hooks
grep -l 'ge_meta_\|ge_ckpt_\|ge_bundle_\|ge_var' \
	"$SRC/lib/graph.c" "$SRC/lib/graph_parse.c" "$SRC/lib/graph_io.c" \
	"$SRC/lib/check.c" \
	> "$T/calls" 2>/dev/null
test ! -s "$T/calls"
s=$?
ok $s "the graph layer calls nothing of the model, variables or checkpoints"
test $s -eq 0 || diag "$T/calls"

# no Lua in lib/
grep -l '#include *[<"]\(lua\|lauxlib\|lualib\)\.h' "$SRC"/lib/*.c \
	"$SRC"/lib/*.h > "$T/lua" 2>/dev/null
test ! -s "$T/lua"
s=$?
ok $s "no file of lib/ includes a Lua header"
test $s -eq 0 || diag "$T/lua"

# file sizes
: > "$T/big"
for p in "$SRC"/lib/*.c "$SRC"/lib/*.h "$SRC"/src/*.c "$SRC"/src/*.h; do
	nl=`wc -l < "$p"`
	test "$nl" -le $MAX_LINES ||
		echo "`basename "\`dirname "$p"\`"`/`basename "$p"`: $nl lines" \
			>> "$T/big"
done
test ! -s "$T/big"
s=$?
ok $s "no file of lib/ or src/ is over $MAX_LINES lines"
test $s -eq 0 || diag "$T/big"

# function sizes: a definition starts at a line at column 0 naming a
# function (not a prototype) and ends at the first "}" at column 0
for p in "$SRC"/lib/*.c "$SRC"/src/*.c; do
	rel="`basename "\`dirname "$p"\`"`/`basename "$p"`"
	awk -v file="$rel" -v max=$MAX_FUNC '
		start == 0 && /^[A-Za-z_][^;=]*\(/ && !/;[ \t]*$/ && !/^(typedef|struct|enum|union) / {
			s = $0
			sub(/\(.*/, "", s)
			n = split(s, w, /[ \t*]+/)
			name = w[n]
			start = NR
			next
		}
		start && /^[;]/ { start = 0; next }
		start && /;[ \t]*$/ && !body { start = 0; next }
		start && /^\{/ { body = 1 }
		start && /^}/ {
			if (NR - start + 1 > max)
				print file, name, NR - start + 1
			start = 0
			body = 0
		}
	' "$p"
done > "$T/long"
: > "$T/over"
: > "$T/paid"
while read -r file name lines; do
	if echo "$DEBTS" | grep -q "^$file $name "; then
		echo "$file $name ($lines lines)" >> "$T/paid"
	else
		echo "$file: $name is $lines lines" >> "$T/over"
	fi
done < "$T/long"
test ! -s "$T/over"
s=$?
ok $s "no function of lib/ or src/ is over $MAX_FUNC lines, but the named debts"
test $s -eq 0 || diag "$T/over"
test -s "$T/paid" && { echo "# known debts still over $MAX_FUNC lines:"; diag "$T/paid"; }

# a debt whose function was split is crossed off
: > "$T/stale"
echo "$DEBTS" | while read -r file name reason; do
	test -n "$file" || continue
	grep -q "^$file $name " "$T/paid" || echo "$file $name" >> "$T/stale"
done
test ! -s "$T/stale"
s=$?
ok $s "every named debt is still a long function (else remove it)"
test $s -eq 0 || diag "$T/stale"

echo "1..$n"
exit $failed
