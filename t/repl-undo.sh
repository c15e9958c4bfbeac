#!/bin/sh
# repl-undo.sh: the prompt's undo() takes back the last entry's edits of
# every graph it changed (a clone included), and says when there is
# nothing to undo; the unsaved mark follows the graph the global g holds
# (g = bak, then a save: no stale "unsaved"); an unknown method or field
# of a graph, an op or a tensor raises, naming the nearest ones.  Through
# tmux; skipped when it is not installed.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"
. "${GE_TOP_SRCDIR:-.}/t/repl-tmux.sh"

cat >"$T/mk.lua" <<'LUA'
local F = "float32"
local g = ge.graph()
g:add_op{type = "Placeholder", name = "x", attrs = {dtype = F, shape = ge.shape{-1, 4}}}
g:add_op{type = "Relu", name = "dense/relu", inputs = {"x"}, attrs = {T = F}}
g:add_op{type = "Identity", name = "y", inputs = {"dense/relu"}, attrs = {T = F}}
assert(g:save(arg[1]))
LUA
"$BIN" "$T/mk.lua" "$T/m.pb"
ok $? "writing a model"

start -i "$T/m.pb"
expect 'g = graph "' "the prompt starts"

# ---------------------------------------------------------------- undo
keys 'undo()' Enter
expect "nothing to undo" "undo with nothing done says so"
keys 'relu = g:op("dense/relu")' Enter
keys 'bak = g:clone()' Enter
keys 'g:remove_op(g:op("y")); bak:remove_op(bak:op("y"))' Enter
keys '#g .. " " .. #bak' Enter
expect "2 2" "one entry edits two graphs"
expect_line 'g unsaved>' "g has unsaved edits"
keys 'undo()' Enter
expect "undone: graph" "undo() says what it took back"
keys 'table.concat({#g, #bak, g:op("y").type, relu.type}, " ")' Enter
expect "3 3 Identity Relu" \
	"both graphs are back, an op taken before still works"
expect_line '>' "g is as loaded again: not unsaved"
keys 'undo()' Enter
expect "nothing to undo" "one entry is undone, not two"
keys 'relu:set_attr("T", "int32")' Enter
keys 'x = 1' Enter
keys 'undo()' Enter
keys 'relu:attr("T")' Enter
expect "float32" "undo takes back the last entry that edited, an attr too"

# ---------------------------------------------------------------- unsaved
keys 'bak = g:clone(); g:remove_op(g:op("y"))' Enter
expect_line 'g unsaved>' "an edit makes g unsaved"
keys "g = bak; g:save('$T/b.pb')" Enter
expect_line '>' "after g = bak and a save, g is not unsaved"
keys 'g = ge.load("'"$T/m.pb"'")' Enter
expect_line '>' "a graph just loaded is not unsaved"

# ---------------------------------------------------------------- names
keys 'g:insrt_after()' Enter
expect "no method or field 'insrt_after' in a graph; did you mean insert_after?" \
	"a misspelt method names the nearest"
keys 'g:op("x").nmae' Enter
expect "no method or field 'nmae' in an op; did you mean name?" \
	"a misspelt field raises instead of giving nil"
keys 'g:tensor("x:0").shpe' Enter
expect "no method or field 'shpe' in a tensor; did you mean shape?" \
	"so does a tensor's"
keys 'g:op("x").name' Enter
expect '"x"' "a field that exists still reads" 
leave
ok $? "^D leaves"

echo "1..$n"
exit $failed
