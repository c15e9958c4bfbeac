#!/bin/sh
# gen-apihelp.sh LUA-API.MD > OUTPUT
#
# Writes the index the prompt's help() reads: one line per entry of the
# API reference (a table row, a **`call`** paragraph or a ### `call`
# heading), as "NAMES<TAB>SECTION<TAB>TEXT".  NAMES are the function or
# field names the entry's first cell spells (`ge.copy`, `g:op`, `copy`),
# SECTION the ## heading it sits under, TEXT the entry in one line
# without markdown quotes.  Made at build time, so that the prompt and
# the reference cannot disagree.
set -e
if test $# -ne 1; then
	echo "usage: gen-apihelp.sh LUA-API.MD > OUTPUT" >&2
	exit 2
fi
awk '
function names(cell,    out, s, m) {
	out = ""
	s = cell
	while (match(s, /`[^`]*`/)) {
		m = substr(s, RSTART + 1, RLENGTH - 2)
		s = substr(s, RSTART + RLENGTH)
		sub(/[( \[].*/, "", m)
		if (m ~ /^[A-Za-z_][A-Za-z0-9_.:]*$/)
			out = out (out == "" ? "" : " ") m
	}
	return out
}
function clean(s) {
	gsub(/`/, "", s); gsub(/\*\*/, "", s); gsub(/\\\|/, "|", s)
	gsub(/\001/, "|", s)
	gsub(/[ \t]+/, " ", s); sub(/^ /, "", s); sub(/ $/, "", s)
	return s
}
function flush() {
	if (pend != "") {
		t = clean(para)
		# the call and its first sentence
		if (match(t, /\.( |$)/)) t = substr(t, 1, RSTART)
		print pend "\t" section "\t" t
	}
	pend = ""; para = ""
}
/^```/ { flush(); incode = !incode; next }
incode { next }
/^## / { flush(); section = clean(substr($0, 4)); next }
/^### `/ { flush(); n = names($0); if (n != "") print n "\t" section "\t" clean(substr($0, 5)); next }
/^\*\*`/ { flush(); pend = names(substr($0, 1, index(substr($0, 3), "**") + 3)); para = $0; if (pend == "") para = ""; next }
/^[ \t]*$/ { flush(); next }
pend != "" { para = para " " $0; next }
/^\| `/ {
	# an escaped \| inside a cell is a pipe, not a column
	line = $0
	gsub(/\\\|/, "\001", line)
	split(line, c, "|")
	n = names(c[2])
	if (n == "") next
	rest = ""
	for (i = 3; i < length(c); i++) rest = rest (i > 3 ? " - " : "") c[i]
	print n "\t" section "\t" clean(c[2]) " -> " clean(rest)
}
END { flush() }
' "$1"
