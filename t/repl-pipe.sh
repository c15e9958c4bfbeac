#!/bin/sh
# repl-pipe.sh: the prompt without a terminal: the first error ends the
# run with exit 1, as a script run does; tables print as constructors
# (there and in ge.describe); help() prints lines of the API reference,
# the same ones doc/lua-api.md has.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
SRC=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-rpipe.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$SRC/t/testlib.sh"

"$BIN" convert "$SRC/doc/examples/small_cnn.pbtxt" "$T/m.pb" 2>"$T/err"
ok $? "writing a model"

printf 'print("one")\nerror("boom")\nprint("two")\n' >"$T/in.lua"
"$BIN" -i "$T/m.pb" <"$T/in.lua" >"$T/out" 2>"$T/err"
rc=$?
is_rc 1 "an error without a terminal ends the run"
has "$T/out" one "what came before the error ran"
! grep -x two "$T/out" >/dev/null
ok $? "what came after it did not"
has "$T/err" "gerewrite: stdin:1: boom" "the error is reported"

printf 'x = (\n' | "$BIN" -i "$T/m.pb" >"$T/out" 2>"$T/err"
rc=$?
is_rc 3 "a chunk that does not compile ends the run as a script's would"

printf 'print("a")\nprint("b")\n' | "$BIN" -i "$T/m.pb" >"$T/out" 2>"$T/err"
rc=$?
is_rc 0 "a clean run exits 0"

cat >"$T/in.lua" <<'LUA'
{a = 1}
g:opdef("Relu")
ge.describe({2, 3, name = "n", nested = {["odd key"] = true}})
local t = {} for i = 1, 30 do t[i] = {i = i} end return t
LUA
"$BIN" -i "$T/m.pb" <"$T/in.lua" >"$T/out" 2>"$T/err"
has "$T/out" "{a = 1}" "a table with a named field prints as a constructor"
has "$T/out" '  name = "Relu",' "a long table prints one field a line"
has "$T/out" '{2, 3, name = "n", nested = {["odd key"] = true}}' \
	"ge.describe uses the same rules"
has "$T/out" '  -- ... 10 more' "long tables are cut after a limit"

cat >"$T/in.lua" <<'LUA'
help "copy"
help(ge.load)
help "g:op"
help()
LUA
"$BIN" -i "$T/m.pb" <"$T/in.lua" >"$T/out" 2>"$T/err"
has "$T/out" "copy(v [, opts]) -> view, info" "help \"copy\" prints ge.transform's copy"
has "$T/out" "ge.load(path [, opts]) -> graph" "help(ge.load) finds the function's name"
has "$T/out" "g:op(name) -> the op named name" "help \"g:op\" prints a method"
has "$T/out" "help(ge.copy), help \"copy\"" "help() says how to use it"
# every line help prints comes from the reference
grep -F 'g:op(name)' "$SRC/doc/lua-api.md" | grep -F 'the op named' >/dev/null
ok $? "the reference has the line help printed"

echo "1..$n"
exit $failed
