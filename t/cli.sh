#!/bin/sh
# cli.sh: the gerewrite command line: exit codes, -e order, the arg table,
# --help/--version, scripts from stdin, error message format, piped prompt.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-cli.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

# run_in INPUT CMD...: as run (testlib.sh), with INPUT on standard input
run_in() {
	input=$1
	shift
	printf '%s' "$input" | "$@" >"$T/out" 2>"$T/err"
	rc=$?
}
is_out() { # is_out WANT NAME
	printf '%s\n' "$1" >"$T/want"
	cmp -s "$T/want" "$T/out"
	s=$?
	ok $s "$2"
	if test $s -ne 0; then echo "# expected:"; diag "$T/want";
		echo "# got:"; diag "$T/out"; fi
}
is_err() { # is_err WANT NAME: stderr is exactly WANT
	printf '%s\n' "$1" >"$T/want"
	cmp -s "$T/want" "$T/err"
	s=$?
	ok $s "$2"
	if test $s -ne 0; then echo "# expected:"; diag "$T/want";
		echo "# got:"; diag "$T/err"; fi
}

# ---------------------------------------------------------------- info
run "$BIN" --version
is_rc 0 "--version"
grep '^gerewrite [0-9][0-9.]* (Lua 5\.4' "$T/out" >/dev/null
ok $? "--version prints the version"
run "$BIN" --help
is_rc 0 "--help"
has "$T/out" "Usage: gerewrite" "--help shows the usage"
has "$T/out" "Exit status" "--help documents exit codes"
has "$T/out" "MODEL" "--help documents the model rule of -i"
cp "$T/out" "$T/help"
run "$BIN" help
is_rc 0 "the help command"
cmp -s "$T/help" "$T/out"
ok $? "the help command prints the same text"
run "$BIN" -h
cmp -s "$T/help" "$T/out"
ok $? "-h is --help"

# ---------------------------------------------------------------- scripts
cat >"$T/hello.lua" <<'EOF'
print("hello", ge == require "gerewrite", ge.type(ge.graph()))
EOF
run "$BIN" "$T/hello.lua"
is_rc 0 "a script that succeeds"
is_out "hello	true	graph" "the script ran with ge bound"

cat >"$T/args.lua" <<'EOF'
print(arg[0], arg[1], arg[2], #arg, select("#", ...), ...)
EOF
run "$BIN" "$T/args.lua" one "two words"
is_rc 0 "a script with arguments"
is_out "$T/args.lua	one	two words	2	2	one	two words" \
	"arguments are in arg and in ..."
run "$BIN" -e 'x = 1' "$T/args.lua" -e
is_out "$T/args.lua	-e	nil	1	1	-e" \
	"options after the script are its arguments"
run "$BIN" -- "$T/args.lua" a
is_out "$T/args.lua	a	nil	1	1	a" "-- ends the options"

cat >"$T/err.lua" <<'EOF'
local x = 1
error("boom")
EOF
run "$BIN" "$T/err.lua"
is_rc 1 "a script raising an error"
is_err "gerewrite: $T/err.lua:2: boom" "one line naming the file and line"
run "$BIN" --traceback "$T/err.lua"
has "$T/err" "stack traceback:" "--traceback adds a traceback"
GEREWRITE_TRACEBACK=1 "$BIN" "$T/err.lua" >/dev/null 2>"$T/err"
has "$T/err" "stack traceback:" "GEREWRITE_TRACEBACK=1 too"

cat >"$T/api.lua" <<'EOF'
local g = ge.graph()
local op = g:add_op{type = "NoOp", name = "n"}
op:set_input(0, nil)
EOF
run "$BIN" "$T/api.lua"
is_rc 1 "misusing the API"
has "$T/err" "gerewrite: $T/api.lua:3: bad argument #1 to 'set_input'" \
	"API errors point at the script line"

cat >"$T/syntax.lua" <<'EOF'
print("a"
x = = 2
EOF
run "$BIN" "$T/syntax.lua"
is_rc 3 "a script that does not compile"
grep "^gerewrite: $T/syntax.lua:2: " "$T/err" >/dev/null
ok $? "the syntax error names the file and line"
test `wc -l <"$T/err"` -eq 1
ok $? "in one line"

run "$BIN" "$T/missing.lua"
is_rc 2 "a missing script"
is_err "gerewrite: $T/missing.lua: No such file or directory" \
	"the message names the file"
run "$BIN" "$T"
is_rc 2 "a directory as the script"

printf '#!/usr/bin/env gerewrite\nerror("shebang")\n' >"$T/bang.lua"
run "$BIN" "$T/bang.lua"
is_err "gerewrite: $T/bang.lua:2: shebang" "a #! line is skipped, lines kept"

printf 'os.exit(7)\n' >"$T/exit.lua"
run "$BIN" "$T/exit.lua"
is_rc 7 "os.exit sets the status"

printf 'error(setmetatable({}, {__tostring = function() return "custom" end}))\n' \
	>"$T/obj.lua"
run "$BIN" "$T/obj.lua"
is_err "gerewrite: custom" "error objects with __tostring"
printf 'error({})\n' >"$T/tbl.lua"
run "$BIN" "$T/tbl.lua"
is_rc 1 "a table error object"
is_err "gerewrite: (error object is a table value)" "is described"

printf '\033Lua binary\n' >"$T/bin.lua"
run "$BIN" "$T/bin.lua"
is_rc 3 "binary chunks are refused"

# ---------------------------------------------------------------- usage
run "$BIN" -x
is_rc 2 "an unknown option"
has "$T/err" "gerewrite: unknown option '-x'" "names the option"
has "$T/err" "--help" "and points at --help"
run "$BIN" -e
is_rc 2 "-e without code"
has "$T/err" "option '-e' needs an argument" "says so"

# ---------------------------------------------------------------- -e, -l
run "$BIN" -e 'x = 1' -e 'x = x * 10' -e 'print(x)'
is_rc 0 "several -e"
is_out "10" "-e runs in order"
run "$BIN" -e 'y = 5' -e'y = y + 1' -e 'print(y)'
is_out "6" "-eCODE works too"
printf 'print(y)\n' >"$T/y.lua"
run "$BIN" -e 'y = 5' "$T/y.lua"
is_out "5" "-e runs before the script"
run "$BIN" -e 'print(ge.version ~= nil)'
is_out "true" "-e sees ge"
run "$BIN" -e 'error("bad")'
is_rc 1 "an error in -e"
is_err "gerewrite: (command line):1: bad" "names the command line"
run "$BIN" -e 'x = = 1'
is_rc 3 "a syntax error in -e"
run "$BIN" -e 'print(1)' -e 'error("stop")' -e 'print(2)'
is_out "1" "an error in -e stops the rest"
run "$BIN" -l s=string -e 'print(s.rep("ab", 2))'
is_out "abab" "-l GLOBAL=MODULE"

# ---------------------------------------------------------------- stdin
run_in 'print(arg[0], ...)' "$BIN" - a b
is_rc 0 "a script from stdin"
is_out "-	a	b" "- with arguments"
run_in 'error("in stdin")' "$BIN" -
is_err "gerewrite: stdin:1: in stdin" "errors in stdin scripts"
run_in 'print(40 + 2)' "$BIN"
is_out "42" "no script and a piped stdin runs stdin"

# ---------------------------------------------------------------- prompt
input='1 + 1
x = 3
x * 2
for i = 1, 2 do
print(i)
end
"a", nil, 3
ge.graph()
error("oops")
print("after")
'
run_in "$input" "$BIN" -i
is_rc 1 "a piped prompt stops at the first error"
is_out '2
6
1
2
a	nil	3
graph "" (0 ops)' "expressions print, no prompt or banner when not a terminal"
is_err "gerewrite: stdin:1: oops" "the error is reported"
run_in 'for i = 1, 2 do' "$BIN" -i
has "$T/err" "<eof>" "an unfinished chunk at the end is reported"
run_in 'print(z)' "$BIN" -i -e 'z = 9'
is_out "9" "-e runs before the prompt"

# a model as the first argument of -i
cat >"$T/mk.lua" <<'EOF'
local g = ge.graph()
g:add_op{type = "NoOp", name = "a"}
g:add_op{type = "NoOp", name = "b"}
assert(g:save(arg[1]))
EOF
run "$BIN" "$T/mk.lua" "$T/m.pb"
is_rc 0 "making a model"
run_in 'print(#g, g.name == arg[0])' "$BIN" -i "$T/m.pb"
is_rc 0 "-i MODEL"
is_out "2	true" "loads the model as g"
run_in 'print(g:op("b").name)' "$BIN" -i "$T/m.pb" -e 'g:op("a").name = "c"'
is_out "b" "the model is loaded before -e"
run "$BIN" "$T/m.pb"
is_rc 2 "a model given as the script"
is_err "gerewrite: $T/m.pb: a model, not a Lua script (to explore it: gerewrite -i $T/m.pb)" \
	"says how to explore it"
run_in '' "$BIN" -i "$T/none.pb"
is_rc 2 "-i with a missing model"
has "$T/err" "none.pb" "names it"
run_in 'print(w)' "$BIN" -i "$T/y.lua"
is_out "nil
nil" "-i with a .lua file runs it as a script first"

# ---------------------------------------------------------------- prelude
mkdir "$T/lua"
printf 'local ge = ...\nge.marker = "from disk"\n' >"$T/lua/gerewrite.lua"
GEREWRITE_LUA_DIR="$T/lua" "$BIN" -e 'print(ge.marker, ge.describe)' \
	>"$T/out" 2>"$T/err"
is_out "from disk	nil" "GEREWRITE_LUA_DIR replaces the built-in Lua files"
run "$BIN" -e 'print(ge.marker, type(ge.describe))'
is_out "nil	function" "the built-in prelude otherwise"
printf 'local ge = ...\nge.x = = 1\n' >"$T/lua/gerewrite.lua"
GEREWRITE_LUA_DIR="$T/lua" "$BIN" -e 'print(1)' >"$T/out" 2>"$T/err"
rc=$?
is_rc 1 "a broken prelude"
has "$T/err" "$T/lua/gerewrite.lua:2:" "is reported with its file and line"
if test -n "$GE_TOP_SRCDIR"; then
	GEREWRITE_LUA_DIR="$GE_TOP_SRCDIR/src/lua" "$BIN" \
		-e 'print(type(ge.describe))' >"$T/out" 2>"$T/err"
	is_out "function" "the source tree's src/lua works as GEREWRITE_LUA_DIR"
fi

# ---------------------------------------------------------------- ^C
cat >"$T/loop.lua" <<'EOF'
local f = assert(io.open(arg[1], "w"))
f:write("ready\n")
f:close()
while true do end
EOF
"$BIN" "$T/loop.lua" "$T/ready" >/dev/null 2>"$T/int" &
pid=$!
i=0
while test ! -s "$T/ready" && test $i -lt 100; do
	sleep 0.1
	i=`expr $i + 1`
done
kill -INT $pid 2>/dev/null
i=0
while kill -0 $pid 2>/dev/null && test $i -lt 50; do
	sleep 0.1
	i=`expr $i + 1`
done
if kill -0 $pid 2>/dev/null; then
	kill -9 $pid
fi
wait $pid
rc=$?
is_rc 1 "SIGINT stops a running script"
has "$T/int" "interrupted" "and says so"

echo "1..$n"
exit $failed
