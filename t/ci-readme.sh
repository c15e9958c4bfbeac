#!/bin/sh
# ci-readme.sh: CI (.ci/run) runs the README's two commands as written:
# what it extracts is exactly the README's "Two commands" section, the
# build (with a first recipe run) and `make check`.
SRC=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-ci-readme.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$SRC/t/testlib.sh"

if test ! -f "$SRC/.ci/run"; then
	echo "1..0 # SKIP no .ci/run (a release tarball)"
	exit 0
fi
# (an older .ci/run would start the whole of CI on any argument)
grep -q -e '--readme-commands' "$SRC/.ci/run"
ok $? ".ci/run reads its commands from the README"
run bash "$SRC/.ci/run" --readme-commands
is_rc 0 ".ci/run --readme-commands"
test "`wc -l < "$T/out"`" -eq 2
ok $? "CI finds two commands in the README"
# each is a line of the README, indented as a command, in its section
sed -n '/^Two commands$/,/^A short tour$/p' "$SRC/README" > "$T/section"
while read -r c; do
	grep -x -F -e "    $c" "$T/section" >/dev/null
	ok $? "the README's section has, verbatim: $c"
done < "$T/out"
grep -c '^    [^ ]' "$T/section" > "$T/n"
has "$T/n" "2" "the section holds exactly the two commands CI runs"
first=`sed -n 1p "$T/out"`
case "$first" in
*"./configure && make && ./src/gerewrite run "*) s=0 ;;
*) s=1 ;;
esac
ok $s "the first builds in the source tree and runs a recipe"
test "`sed -n 2p "$T/out"`" = "make check"
ok $? "the second is make check"
# CI runs them (and nothing typed in its place) before the other steps
grep -n 'bash -c "\$build_cmd"\|bash -c "\$check_cmd"\|configure" --enable-werror' \
	"$SRC/.ci/run" | cut -d: -f1 > "$T/lines"
test "`sort -n "$T/lines" | tr '\n' ' '`" = "`tr '\n' ' ' < "$T/lines"`" &&
	test "`wc -l < "$T/lines"`" -eq 3
ok $? "CI runs the README's commands first, then builds out of tree"

echo "1..$n"
exit $failed
