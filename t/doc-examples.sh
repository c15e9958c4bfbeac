#!/bin/sh
# doc-examples.sh: runs the Lua examples of the documentation, so that
# what the reference shows is what the program does.
#
# - every doc/*.md but match.md: every ```lua fenced block is a complete
#   script (blocks that are not meant to run use another fence: ```text,
#   or none); doc/lua-api.md and doc/graph_editor.md must have some.
# - README (plain text): an example is a block indented by four spaces
#   whose first line is a Lua comment naming a script, `-- tour.lua: ...`;
#   it runs until the first non-blank line indented by less.
#
# Each example runs with the built gerewrite in a fresh directory of its
# own holding model.pb, the small CNN of doc/examples/small_cnn.pbtxt
# converted to a binary GraphDef, and must exit with status 0 (the
# examples check their results with assert).  doc/match.md has its own
# runner, t/doc-match.sh.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
SRC=${GE_TOP_SRCDIR:-.}
case $BIN in /*) ;; *) BIN=`pwd`/$BIN ;; esac
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-docex.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
mkdir "$T/blocks" "$T/run"

if ! "$BIN" convert "$SRC/doc/examples/small_cnn.pbtxt" "$T/model.pb" \
	>"$T/out" 2>&1; then
	echo "1..1"
	echo "not ok 1 - convert doc/examples/small_cnn.pbtxt to model.pb"
	sed 's/^/# /' "$T/out"
	exit 1
fi

# One file per example: blocks/DOC-LINE.lua (DOC with / as _), the line
# being where the code starts.
extract_md() {
	awk -v dir="$T/blocks" -v tag="$2" '
		!inblock && /^```lua[ \t]*$/ {
			inblock = 1
			f = sprintf("%s/%s-%06d.lua", dir, tag, NR + 1)
			printf "" > f
			next
		}
		inblock && /^```/ { inblock = 0; close(f); next }
		inblock { print > f }
		END {
			if (inblock) {
				print FILENAME ": unterminated ```lua block" > "/dev/stderr"
				exit 1
			}
		}
	' "$1"
}

extract_readme() {
	awk -v dir="$T/blocks" -v tag="$2" '
		function stop() { if (inblock) { close(f); inblock = 0 } }
		inblock && /^    / { print substr($0, 5) > f; next }
		inblock && /^[ \t]*$/ { print "" > f; next }
		inblock { stop() }
		/^    -- [A-Za-z0-9_.-]+\.lua/ {
			inblock = 1
			f = sprintf("%s/%s-%06d.lua", dir, tag, NR)
			print substr($0, 5) > f
			next
		}
		END { stop() }
	' "$1"
}

# every page of doc/, so that a new page's examples run too
DOCS=
for f in "$SRC"/doc/*.md; do
	case $f in */match.md) continue ;; esac
	DOCS="$DOCS doc/`basename "$f"`"
done
DOCS="$DOCS README"

status=0
for doc in $DOCS; do
	tag=`echo "$doc" | tr '/' '_'`
	if test ! -r "$SRC/$doc"; then
		echo "$SRC/$doc: cannot read" >&2
		status=1
		continue
	fi
	case $doc in
	*.md) extract_md "$SRC/$doc" "$tag" || status=1 ;;
	*) extract_readme "$SRC/$doc" "$tag" || status=1 ;;
	esac
done

n=0
failed=0
for doc in $DOCS; do
	tag=`echo "$doc" | tr '/' '_'`
	found=0
	for f in "$T/blocks/$tag"-*.lua; do
		test -e "$f" || continue
		found=1
		n=`expr $n + 1`
		line=`basename "$f" .lua | sed 's/.*-0*//'`
		d="$T/run/$n"
		mkdir "$d"
		cp "$T/model.pb" "$d/model.pb"
		if (cd "$d" && GEREWRITE_PATH= "$BIN" "$f") \
			>"$T/out" 2>"$T/err" </dev/null; then
			echo "ok $n - $doc example at line $line"
		else
			echo "not ok $n - $doc example at line $line"
			sed 's/^/# /' "$T/err"
			failed=1
		fi
		rm -rf "$d"
	done
	case $doc in doc/lua-api.md|doc/graph_editor.md|README) ;; *) found=1 ;; esac
	if test $found -eq 0; then
		n=`expr $n + 1`
		echo "not ok $n - $doc has examples"
		failed=1
	fi
done
if test $status -ne 0; then
	n=`expr $n + 1`
	echo "not ok $n - the documents could be read and split"
	failed=1
fi
echo "1..$n"
exit $failed
