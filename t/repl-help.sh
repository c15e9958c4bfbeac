#!/bin/sh
# repl-help.sh: the prompt's help() finds methods by bare and qualified
# names (help "insert_after", help "g:insert_after", help(g.insert_after))
# and prints whole entries of the API reference (help "clone": the
# sentences after the call too); a pattern lists the entries holding it,
# a sentence each.  Through tmux; skipped when it is not installed.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"
. "${GE_TOP_SRCDIR:-.}/t/repl-tmux.sh"

cat >"$T/mk.lua" <<'LUA'
local g = ge.graph()
g:add_op{type = "Placeholder", name = "x", attrs = {dtype = "float32"}}
assert(g:save(arg[1]))
LUA
"$BIN" "$T/mk.lua" "$T/m.pb" 2>"$T/err"
ok $? "writing a model"

start -i "$T/m.pb"
expect 'g = graph "' "the prompt starts"
keys 'help "insert_after"' Enter
expect "g:insert_after(sites, template" "help of a method's bare name"
expect "A malformed" "prints the whole entry, to its last sentence"
keys C-l 'help "g:insert_after"' Enter
expect "g:insert_after(sites, template" "help of a method's qualified name"
keys C-l 'help(g.insert_after)' Enter
expect "g:insert_after(sites, template" "help of a method's value"
keys C-l 'help "clone"' Enter
expect "g:clone() -> graph. A deep copy" "help \"clone\""
expect "unique name is the one g would give)" "gives the whole entry"
keys C-l 'help "op:name"' Enter
expect "op.name -> its name; settable" "op:name finds the op's field"
keys C-l 'help "reroute_"' Enter
expect "reroute_ts(" "a part of names lists the entries holding it"
expect "reroute_inputs(" "each of them"
keys C-l 'help()' Enter
expect 'help "g:insert_after"' "the introduction says how to ask"
expect "undo()" "and mentions undo"
leave
ok $? "^D leaves"

echo "1..$n"
exit $failed
