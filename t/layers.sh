#!/bin/sh
# layers.sh: the rules of doc/hacking.md.  Every file of lib/ (its
# subfolders too: lib/exec/kernel.h is "exec/kernel") is in the layers
# table there; no file of lib/ includes a header of a layer above its
# own, nor a Lua header; no file of lib/ calls a function (or reads a
# variable) that a file of a layer above defines, as the built objects'
# symbols say (nm); no file of lib/ or src/ is over 1,800 lines and no
# function over 150, but for the named debts below.
#
# The rules are about the project's own files: in a git checkout those
# git tracks, elsewhere (a release tarball) those on disk but the ones
# the build makes (Makefile.am's CLEANFILES: lib/opdefs_data.c,
# src/apihelp_data.c, ...), so a build in the source tree changes
# nothing here.
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

# the project's files of lib/, src/ and t/, relative to SRC, sorted
if test "`git -C "$SRC" rev-parse --show-prefix 2>/dev/null`" = "" &&
	git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$SRC" ls-files lib src t > "$T/all"
else
	sed -n 's/^CLEANFILES *+= *//p' "$SRC/Makefile.am" | tr ' \t' '\n\n' |
		grep '^[a-z]' > "$T/built"
	(cd "$SRC" && find lib src t -type f) | grep -v -x -F -f "$T/built" \
		> "$T/all"
fi
sort -o "$T/all" "$T/all"
# the lists the checks walk, one path relative to SRC a line
grep -E '^lib/.*\.[ch]$' "$T/all" > "$T/lib_ch"
grep -E '^lib/.*\.c$' "$T/all" > "$T/lib_c"
grep -E '^lib/.*_impl\.h$' "$T/all" > "$T/lib_impl"
grep -E '^(lib/.*|src/[^/]*)\.[ch]$' "$T/all" > "$T/code_ch"
grep -E '^(lib/.*|src/[^/]*)\.c$' "$T/all" > "$T/code_c"
grep -E '^(src|t)/[^/]*\.[ch]$' "$T/all" > "$T/outside"
test -s "$T/lib_c" && grep -q '^src/main\.c$' "$T/all"
ok $? "the files of lib/ and src/ are found"
# lib/exec/kernel.h -> exec/kernel
stem() { echo "$1" | sed 's|^lib/||; s/\.[ch]$//'; }

# layer of each lib/ file stem, from the table of doc/hacking.md
sed -n 's/^| \([0-9]\) [a-z]* | \(.*\) |$/\1 \2/p' "$SRC/doc/hacking.md" |
while read -r layer names; do
	echo "$names" | tr ',' '\n' | sed 's/^ *//; s/ *$//' |
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
while read -r p; do
	test -n "`layer_of "\`stem "$p"\`"`" || echo "$p"
done < "$T/lib_ch" > "$T/missing"
test ! -s "$T/missing"
s=$?
ok $s "every file of lib/ (and of its subfolders) is in the layers table"
test $s -eq 0 || diag "$T/missing"

# includes go down or sideways
while read -r p; do
	mine=`layer_of "\`stem "$p"\`"`
	test -n "$mine" || continue
	sed -n 's/^#include "\([a-z0-9_/]*\)\.h".*/\1/p' "$SRC/$p" |
	while read -r h; do
		theirs=`layer_of "$h"`
		test -n "$theirs" || continue # generated: config.h
		if test "$theirs" -gt "$mine"; then
			echo "$p (layer $mine) includes $h.h (layer $theirs)"
		fi
	done
done < "$T/lib_ch" > "$T/up"
test ! -s "$T/up"
s=$?
ok $s "no file of lib/ includes a header of a layer above its own"
test $s -eq 0 || diag "$T/up"

# a private header (_impl.h) names in its first comment every file that
# includes it, and nothing outside lib/ includes one
while read -r h; do
	inc=`echo "$h" | sed 's|^lib/||'` # as included: exec/x_impl.h
	sed -n '1,/\*\//p' "$SRC/$h" > "$T/comment"
	while read -r f; do
		grep -q "^#include \"$inc\"" "$SRC/$f" || continue
		grep -q "`basename "$f"`" "$T/comment" ||
			echo "$f includes $inc, whose comment does not name it"
	done < "$T/lib_ch"
	while read -r f; do
		grep -q "^#include \"$inc\"" "$SRC/$f" &&
			echo "$f includes lib/$inc"
	done < "$T/outside"
done < "$T/lib_impl" > "$T/impl"
test ! -s "$T/impl"
s=$?
ok $s "each private header names who includes it, all in lib/"
test $s -eq 0 || diag "$T/impl"

# calls go down or sideways, from the objects' symbols: for each object
# of lib/ (GE_TOP_BUILDDIR/lib/x.o of lib/x.c), the symbols it defines
# (nm --defined-only) and those it uses (nm -u); a use of a symbol
# defined by a file of a higher layer is a call going up.  A loop between
# files of different layers always holds such a call.
B=${GE_TOP_BUILDDIR:-$SRC}
NM=${NM:-nm}
: > "$T/objs"
while read -r p; do
	o="$B/`echo "$p" | sed 's/\.c$/.o/'`"
	test -f "$o" && echo "$p $o" >> "$T/objs"
done < "$T/lib_c"
if test -s "$T/objs" && "$NM" --version >/dev/null 2>&1; then
	while read -r p o; do
		"$NM" --defined-only "$o" |
			awk -v p="$p" 'NF == 3 && $2 ~ /^[A-TV-Z]$/ { print $3, p }'
	done < "$T/objs" | LC_ALL=C sort > "$T/defs"
	while read -r p o; do
		"$NM" -u "$o" | awk -v p="$p" 'NF { print $NF, p }'
	done < "$T/objs" | LC_ALL=C sort > "$T/uses"
	# "caller callee symbol", callee the file defining what caller uses
	LC_ALL=C join "$T/uses" "$T/defs" |
		awk '$2 != $3 { print $2, $3, $1 }' | LC_ALL=C sort -u \
		> "$T/edges"
	awk 'FNR == NR { layer[$1] = $2; next }
	     function stem(p) { sub(/^lib\//, "", p); sub(/\.[ch]$/, "", p)
				return p }
	     { a = layer[stem($1)]; b = layer[stem($2)]
	       if (a != "" && b != "" && b + 0 > a + 0)
		       print $1 " (layer " a ") calls " $3 " of " $2 \
			     " (layer " b ")" }' "$T/layers" "$T/edges" > "$T/upcalls"
	test ! -s "$T/upcalls"
	s=$?
	ok $s "no file of lib/ calls a file of a layer above its own"
	test $s -eq 0 || diag "$T/upcalls"
else
	n=`expr $n + 1`
	echo "ok $n # SKIP no objects of lib/ under $B (build first) or no $NM: calls not checked"
fi

# one exported prefix: every symbol an object of the library exports
# starts with ge_ (static functions may keep short names); gen_opdefs.c is
# a program of the build, not the library; names beginning with "__" are
# the compiler's own (ASan's __odr_asan.* markers beside each global)
if test -s "$T/objs" && "$NM" --version >/dev/null 2>&1; then
	grep -v '^lib/base/gen_opdefs\.c ' "$T/objs" | while read -r p o; do
		"$NM" -g --defined-only "$o" |
			awk -v p="$p" 'NF == 3 && $3 !~ /^(ge_|__)/ { print p ": " $3 }'
	done > "$T/prefix"
	test ! -s "$T/prefix"
	s=$?
	ok $s "every symbol lib/ exports starts with ge_"
	test $s -eq 0 || diag "$T/prefix"
else
	n=`expr $n + 1`
	echo "ok $n # SKIP no objects of lib/ under $B: exported names not checked"
fi

# src/ has no call loop: its objects (src/gerewrite-x.o, the program's
# own names, or src/x.o) as edges "caller callee" for tsort, which names
# the files of a loop.  The Lua bindings (src/l_*.c) count as one: they
# are one module split by userdata type (l_module.c opens the others,
# which use its helpers and each other's push and check functions).
: > "$T/sobjs"
grep -E '^src/[^/]*\.c$' "$T/all" | while read -r p; do
	st=`basename "$p" .c`
	for o in "$B/src/gerewrite-$st.o" "$B/src/$st.o"; do
		test -f "$o" && { echo "$p $o"; break; }
	done
done > "$T/sobjs"
if test -s "$T/sobjs" && "$NM" --version >/dev/null 2>&1; then
	while read -r p o; do
		"$NM" --defined-only "$o" |
			awk -v p="$p" 'NF == 3 && $2 ~ /^[A-TV-Z]$/ { print $3, p }'
	done < "$T/sobjs" | LC_ALL=C sort > "$T/sdefs"
	while read -r p o; do
		"$NM" -u "$o" | awk -v p="$p" 'NF { print $NF, p }'
	done < "$T/sobjs" | LC_ALL=C sort > "$T/suses"
	LC_ALL=C join "$T/suses" "$T/sdefs" |
		sed 's|src/l_[a-z_]*\.c|src/l_*.c|g' |
		awk '$2 != $3 { print $2, $3 }' | LC_ALL=C sort -u > "$T/sedges"
	tsort "$T/sedges" 2>"$T/sloop" >/dev/null
	test ! -s "$T/sloop"
	s=$?
	ok $s "no call loop between files of src/"
	test $s -eq 0 || diag "$T/sloop"
else
	n=`expr $n + 1`
	echo "ok $n # SKIP no objects of src/ under $B (build first): loops not checked"
fi

# the graph layer reaches the layers above only through its hooks
grep -l 'ge_meta_\|ge_ckpt_\|ge_bundle_\|ge_var' \
	"$SRC/lib/graph/graph.c" "$SRC/lib/graph/graph_parse.c" "$SRC/lib/graph/graph_io.c" \
	"$SRC/lib/analyses/check.c" \
	> "$T/calls" 2>/dev/null
test ! -s "$T/calls"
s=$?
ok $s "the graph layer calls nothing of the model, variables or checkpoints"
test $s -eq 0 || diag "$T/calls"

# no Lua in lib/
while read -r p; do
	grep -q '#include *[<"]\(lua\|lauxlib\|lualib\)\.h' "$SRC/$p" &&
		echo "$p"
done < "$T/lib_ch" > "$T/lua"
test ! -s "$T/lua"
s=$?
ok $s "no file of lib/ includes a Lua header"
test $s -eq 0 || diag "$T/lua"

# file sizes
while read -r p; do
	nl=`wc -l < "$SRC/$p"`
	test "$nl" -le $MAX_LINES || echo "$p: $nl lines"
done < "$T/code_ch" > "$T/big"
test ! -s "$T/big"
s=$?
ok $s "no file of lib/ or src/ is over $MAX_LINES lines"
test $s -eq 0 || diag "$T/big"

# function sizes: a definition starts at a line at column 0 naming a
# function (not a prototype) and ends at the first "}" at column 0
while read -r rel; do
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
	' "$SRC/$rel"
done < "$T/code_c" > "$T/long"
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
