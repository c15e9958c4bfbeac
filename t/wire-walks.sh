#!/bin/sh
# wire-walks.sh: lib/base/wire.c is the one place that walks protobuf tags
# and lengths by hand (doc/hacking.md, "The wire module").  No other file
# of lib/ skips fields itself (ge_skip_field), builds a tag from a raw
# field number (`5 << 3 | 2`) or takes a tag apart (`tag >> 3`,
# `tag & 7`): each names its fields from lib/base/wire.h and steps over them
# with ge_wire_next or a finder built on it.
SRC=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-wire.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$SRC/t/testlib.sh"

if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1 &&
	test "`git -C "$SRC" rev-parse --show-prefix 2>/dev/null`" = ""; then
	git -C "$SRC" ls-files 'lib/*.[ch]' > "$T/files"
else
	(cd "$SRC" && find lib -name '*.[ch]') > "$T/files"
fi
grep -v -x -e lib/base/wire.c -e lib/base/wire.h \
	-e lib/opdefs_data.c "$T/files" > "$T/others"
test -s "$T/others"
ok $? "the files of lib/ are found"

# the tell-tale patterns of a hand-written walk
check() { # check DESCRIPTION REGEX
	(cd "$SRC" && xargs grep -n -E "$2" < "$T/others") > "$T/hits"
	test ! -s "$T/hits"
	s=$?
	ok $s "$1"
	test $s -eq 0 || diag "$T/hits"
}
check "no file but wire.c skips fields by hand (ge_skip_field)" \
	'ge_skip_field'
check "no tag is built from a raw field number (N << 3 | W)" \
	'[0-9]+\)? *<< *3\)? *\| *[0-9]'
check "no tag is taken apart by hand (tag >> 3, tag & 7)" \
	'\b(tag|t2|tg|key)[0-9]* *(>> *3|& *7)\b'

# the checks find what they look for
printf 'x = (5 << 3 | 2);\nif ((tag >> 3) == 1) ge_skip_field(&p, e, 2);\n' \
	> "$T/probe.c"
hits=`grep -c -E -e 'ge_skip_field' -e '[0-9]+\)? *<< *3\)? *\| *[0-9]' \
	-e '\b(tag|t2|tg|key)[0-9]* *(>> *3|& *7)\b' "$T/probe.c"`
test "$hits" -eq 2
ok $? "the patterns catch a hand-written walk"

echo "1..$n"
exit $failed
