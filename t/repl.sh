#!/bin/sh
# repl.sh: the interactive prompt on a terminal, driven through tmux:
# completion of methods after ':', of op names inside g:op(", of module
# fields; results and lists of ops as printed; an error that does not end
# the session; history within a session and across sessions; ^C that
# clears the line, the unsaved-edits prompt and the ^D that warns;
# tables printed as constructors; help.  Skipped when tmux is not
# installed.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
case $BIN in /*) ;; *) BIN=`pwd`/$BIN ;; esac
if ! command -v tmux >/dev/null 2>&1; then
	echo "1..0 # SKIP tmux is not installed"
	exit 0
fi
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-repl.XXXXXX"` || exit 1
SOCK=gerewrite-test-$$
tmx() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'tmx kill-server >/dev/null 2>&1; rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"
screen() { tmx capture-pane -p -t t 2>/dev/null >"$T/screen"; }
# wait_for TEXT: until the screen shows TEXT (a fixed string), 15 s at most
wait_for() {
	i=0
	while test $i -lt 150; do
		screen
		grep -F -e "$1" "$T/screen" >/dev/null && return 0
		sleep 0.1
		i=`expr $i + 1`
	done
	return 1
}
# expect TEXT NAME
expect() {
	wait_for "$1"
	s=$?
	ok $s "$2"
	if test $s -ne 0; then
		echo "# no '$1' on the screen:"
		sed 's/^/#   /' "$T/screen"
	fi
}
# the line being edited is the last non-empty one
current_line() {
	screen
	grep -v '^$' "$T/screen" | tail -1
}
# expect_line TEXT NAME: the line being edited becomes TEXT
expect_line() {
	i=0
	while test $i -lt 150; do
		test "`current_line`" = "$1" && break
		sleep 0.1
		i=`expr $i + 1`
	done
	test "`current_line`" = "$1"
	s=$?
	ok $s "$2"
	if test $s -ne 0; then echo "# the line is: `current_line`"; fi
}
keys() { tmx send-keys -t t "$@"; }

cat >"$T/mk.lua" <<'EOF'
local F = "float32"
local g = ge.graph()
g:add_op{type = "Placeholder", name = "x", attrs = {dtype = F, shape = ge.shape{-1, 4}}}
g:add_op{type = "Const", name = "w", attrs = {dtype = F,
         value = ge.tensor_value(F, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}}
g:add_op{type = "MatMul", name = "dense/matmul", inputs = {"x", "w"}, attrs = {T = F}}
g:add_op{type = "Relu", name = "dense/relu", inputs = {"dense/matmul"}, attrs = {T = F}}
g:add_op{type = "Identity", name = "y", inputs = {"dense/relu"}, attrs = {T = F}}
assert(g:save(arg[1]))
EOF
"$BIN" "$T/mk.lua" "$T/m.pb"
ok $? "writing a model"

start() {
	tmx new-session -d -s t -x 160 -y 60 \
		"env HOME='$T' GEREWRITE_HISTORY='$T/history' TERM=screen '$BIN' -i '$T/m.pb'"
}
start
expect "ge is the module, help() the reference, ^D leaves" "the prompt starts with a banner"
expect 'g = graph "' "and says what g is"

keys 'g:o' Tab
expect_line "> g:op" "TAB after ':' completes a method name"
keys '("den' Tab
expect_line '> g:op("dense/' "TAB in g:op(\" completes an op name"
keys 'r' Tab
expect_line '> g:op("dense/relu")' "up to a unique name, closing the quote and the call"
keys Enter
expect 'op Relu "dense/relu"' "the result prints with tostring"

keys 'ge.reroute_t' Tab
expect_line "> ge.reroute_ts" "TAB completes a module field"
keys C-u
keys 'string.rep("ab", 2)' Enter
expect "abab" "plain values print"

keys 'error("oops")' Enter
expect "gerewrite: stdin:1: oops" "an error is shown"
keys '40 + 2' Enter
expect "42" "and the session goes on"

keys 'g:ops()' Enter
expect "5 ops:" "a list of ops prints as a short table"
expect '  3  op MatMul "dense/matmul"' "numbered, one op a line"

keys Up Up Up Up Up
expect_line '> g:op("dense/relu")' "Up recalls earlier lines"
keys Enter
i=0
while test $i -lt 100; do
	screen
	test `grep -c -x 'op Relu "dense/relu"' "$T/screen"` -ge 2 && break
	sleep 0.1
	i=`expr $i + 1`
done
test `grep -c -x 'op Relu "dense/relu"' "$T/screen"` -ge 2
ok $? "a recalled line runs again"

keys 'print("spin" .. "ning") while true do end' Enter
expect "spinning" "a chunk that runs forever"
keys C-c
expect "interrupted" "^C stops a running chunk"
keys '40 + 3' Enter
expect "43" "and the session goes on"
keys 'x = 1 + ' C-c
expect_line '>' "^C clears the line"
keys '41 + 1' Enter
expect "42" "and the session goes on after ^C"
keys 'for i = 1, 2 do' Enter
expect_line '>>' "an unfinished chunk asks for more"
keys C-c
expect_line '>' "^C drops the unfinished chunk"
tmx has-session -t t 2>/dev/null
ok $? "^C at the prompt does not end the session"

keys '{a = 1, "x", b = {c = true}}' Enter
expect '{"x", a = 1, b = {c = true}}' "a table with named fields prints as a constructor"
keys 'g:opdef("Relu")' Enter
expect 'name = "Relu"' "an OpDef prints its fields"
keys 'help "copy"' Enter
expect 'copy(v [, opts]) -> view, info' "help prints the reference's line"
keys 'help(ge.reroute_ts)' Enter
expect 'reroute_ts(' "help of a function value"

keys 'g:op("y"):set_attr("T", "float32")' Enter
expect_line 'g unsaved>' "the prompt says when g has unsaved edits"
keys C-d
expect "g has unsaved edits: g:save(PATH) writes them; ^D again leaves" \
	"^D with unsaved edits warns"
tmx has-session -t t 2>/dev/null
ok $? "and does not leave"
keys "g:save('$T/saved.pb')" Enter
expect_line '>' "after g:save the prompt is plain again"
keys C-d
i=0
while tmx has-session -t t 2>/dev/null && test $i -lt 100; do
	sleep 0.1
	i=`expr $i + 1`
done
! tmx has-session -t t 2>/dev/null
ok $? "^D leaves"
grep -x 'g:ops()' "$T/history" >/dev/null
ok $? "the history is saved"

start
expect "ge is the module" "a second session"
keys Up Up
expect_line '> g:op("y"):set_attr("T", "float32")' "recalls the first session's lines"
keys C-u C-d

echo "1..$n"
exit $failed
