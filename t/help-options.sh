#!/bin/sh
# help-options.sh: the options of the command line are the same in the
# sources, in `gerewrite --help` and `gerewrite help COMMAND`, and in the
# man page (doc/gerewrite.1, installed as it is by `make install`), so
# that they cannot drift.  Nothing is listed here: the commands are those
# of main.c's table, each command's options those of its cli_opt table
# (src/*.c, named COMMAND_opts), the program's own options those main.c
# compares arguments with.  An option added in the usual places (the
# table, the usage text, the man page) needs nothing here.  Also: every
# recipe's summary in `gerewrite help` is a whole sentence, and `help
# info` says that --top also limits the functions listed.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
S=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-helpopt.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$S/t/testlib.sh"
MAN=$S/doc/gerewrite.1

# the option words of a text (stdin): --name, -x and a lone --, one a line
words() {
	sed 's/\\-/-/g' | grep -o -e '--[a-z][a-z0-9-]*' -e '\(^\|[^a-zA-Z0-9-]\)-[a-zA-Z]\($\|[^a-zA-Z0-9-]\)' \
		-e '\(^\|[ "]\)--\($\|[ "]\)' |
	sed 's/^[^-]*//; s/[^a-zA-Z0-9-]*$//' | sort -u
}
# same SETA SETB WHAT: the two lists agree
same() {
	comm -3 "$1" "$2" >"$T/diff"
	test ! -s "$T/diff"
	s=$?
	ok $s "$3"
	if test $s -ne 0; then
		echo "# only in `basename $1` (left) or `basename $2` (right):"
		diag "$T/diff"
	fi
}
# within SET SUPER WHAT: every word of SET is in SUPER
within() {
	comm -23 "$1" "$2" >"$T/diff"
	test ! -s "$T/diff"
	s=$?
	ok $s "$3"
	if test $s -ne 0; then echo "# not in `basename $2`:"; diag "$T/diff"; fi
}
# the man page from .SH/.SS line matching $1 to the next .SH/.SS
man_section() {
	awk -v re="$1" '/^\.S[HS] / { on = ($0 ~ re) ; next } on' "$MAN"
}

# ---------------------------------------------------------------- commands
sed -n 's/^	{"\([a-z]*\)", cmd_[a-z_]*,.*/\1/p' "$S/src/main.c" >"$T/commands"
test -s "$T/commands"
ok $? "main.c has a table of commands (`tr '\n' ' ' <"$T/commands"`)"
"$BIN" --help >"$T/usage"
sed -n '/^Commands/,/^$/s/^  \([a-z]*\) .*/\1/p' "$T/usage" | sort >"$T/c.help"
sort "$T/commands" >"$T/c.src"
same "$T/c.src" "$T/c.help" "--help lists every command"
sed -n 's/^\.SS \([a-z]*\).*/\1/p' "$MAN" | sort >"$T/c.man"
same "$T/c.src" "$T/c.man" "the man page has a section per command"

for c in `cat "$T/commands"`; do
	# the cli_opt table COMMAND_opts, if the command has one
	awk -v t="${c}_opts[]" '
		index($0, "struct cli_opt " t) { on = 1; next }
		on && /^};/ { exit }
		on && match($0, /\{"[a-z0-9-]+", /) {
			print "--" substr($0, RSTART + 2, RLENGTH - 5)
			if (match($0, /, '"'"'.'"'"', /))
				print "-" substr($0, RSTART + 3, 1)
		}' "$S"/src/*.c | sort -u >"$T/$c.src"
	test -s "$T/$c.src" || continue
	"$BIN" help "$c" >"$T/$c.usage"
	grep -e '^  *-' "$T/$c.usage" | sed 's/^\(  *-[^ ,]*\(, --[^ ]*\)\?\).*/\1/' |
		words >"$T/$c.help"
	same "$T/$c.src" "$T/$c.help" "$c: its help lists each of its options"
	sed -n '/^Usage/,/^$/p' "$T/$c.usage" | words >"$T/$c.synopsis"
	within "$T/$c.synopsis" "$T/$c.src" "$c: its usage line names only its options"
	man_section "^\\.SS $c( |\$)" | words >"$T/$c.man"
	same "$T/$c.src" "$T/$c.man" "$c: the man page documents each of its options, and no other"
	awk -v c="$c" '/^\.SH SYNOPSIS/ { on = 1; next } /^\.SH/ { on = 0 }
		on && /^\.B gerewrite/ { cur = $3 } on && cur == c' "$MAN" |
		words >"$T/$c.mansyn"
	within "$T/$c.mansyn" "$T/$c.src" "$c: the man page's synopsis names only its options"
done

grep -e '--top N .*functions' "$T/info.usage" >/dev/null
ok $? "help info says --top also limits the functions listed"

# ---------------------------------------------------------------- the program's own
# the words main.c compares arguments with (collect), and the global
# options it takes before a command (the names of global_options)
{ grep -o -e 'strn\?cmp(a\(rgv\[1\]\)\?, "-[-a-z]*"' "$S/src/main.c" |
	sed 's/.*"\(.*\)"/\1/'
  grep -e 'const names\[\] = {' "$S/src/main.c" |
	grep -o -e '"--[-a-z]*"' | tr -d '"'
} | grep -v -x -e - | sort -u >"$T/main.src"
grep -q -e '--max-memory' "$T/main.src"
ok $? "main.c's options are found (`tr '\n' ' ' <"$T/main.src"`)"
sed -n '1,/^Commands/p' "$T/usage" | grep -e '^  *-' |
	sed 's/^\(  *-[^ ,]*\(, --[^ ]*\)\?\).*/\1/' | words >"$T/main.help"
same "$T/main.src" "$T/main.help" "--help lists each option of the program"
man_section '^\.SH OPTIONS' | words >"$T/main.man"
same "$T/main.src" "$T/main.man" "the man page's OPTIONS are the program's"

# ---------------------------------------------------------------- recipes
sed -n '/^Recipes/,/^$/p' "$T/usage" | sed '1d;$d' >"$T/recipes"
test -s "$T/recipes"
ok $? "--help lists recipes"
! grep -v '[.?!)]$' "$T/recipes" >"$T/bad"
ok $? "every recipe summary is a whole sentence"
diag "$T/bad"
has "$T/recipes" "inline_functions             Replace function calls by copies of the functions' bodies." \
	"inline_functions' summary"

echo "1..$n"
exit $failed
