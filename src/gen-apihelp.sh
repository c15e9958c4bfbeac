#!/bin/sh
# gen-apihelp.sh LUA-API.MD > OUTPUT
#
# Writes the index the prompt's help() reads: one line per entry of the
# API reference, as "NAMES<TAB>SECTION<TAB>TEXT".  An entry is a table
# row, a paragraph opening with **`call`** (several calls may open it,
# and the call may run over lines), or a ### `call` heading; its text is
# the whole entry in one line without markdown quotes: the paragraph,
# or the heading, and the paragraphs that follow it (code blocks and
# tables left out) up to the next entry or heading, each paragraph after
# the first starting with a byte 2.  NAMES are
# the function or field names the entry's calls spell (`ge.copy`, `g:op`,
# `copy`), SECTION the ## heading it sits under.  Made at build time, so
# that the prompt and the reference cannot disagree.
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
# the names of the **`call`** spans of a line (the last may run on)
function bold_names(line,    out, s, k, span) {
	out = ""
	s = line
	while ((k = index(s, "**`")) > 0) {
		s = substr(s, k + 2)
		k = index(s, "`**")
		span = k ? substr(s, 1, k) : s "`"
		out = out (out == "" ? "" : " ") names(span)
		if (!k) break
		s = substr(s, k + 3)
	}
	sub(/^ +/, "", out)
	return out
}
function clean(s) {
	gsub(/`/, "", s); gsub(/\*\*/, "", s); gsub(/\\\|/, "|", s)
	gsub(/\001/, "|", s)
	gsub(/[ \t]+/, " ", s); sub(/^ /, "", s); sub(/ $/, "", s)
	return s
}
function flush() {
	if (pend != "")
		print pend "\t" section "\t" clean(para)
	pend = ""; para = ""; open = 0
}
/^```/ { incode = !incode; next }
incode { next }
/^## / { flush(); section = clean(substr($0, 4)); next }
/^### / {
	flush()
	n = names($0)
	if (n != "") { pend = n; para = substr($0, 5); open = 1 }
	next
}
/^\*\*`/ {
	flush()
	pend = bold_names($0); para = $0; open = 1
	if (pend == "") { para = ""; open = 0 }
	next
}
/^[ \t]*$/ { if (open) para = para " \002"; next }
/^\| `/ {
	flush()
	# an escaped \| inside a cell is a pipe, not a column
	line = $0
	gsub(/\\\|/, "\001", line)
	split(line, c, "|")
	n = names(c[2])
	if (n == "") next
	rest = ""
	for (i = 3; i < length(c); i++) rest = rest (i > 3 ? " - " : "") c[i]
	print n "\t" section "\t" clean(c[2]) " -> " clean(rest)
	next
}
/^\|/ { next }
pend != "" { para = para " " $0; next }
END { flush() }
' "$1" | sed 's/\( *\x02\)*$//; s/\( *\x02\)\{2,\}/ \x02/g'
