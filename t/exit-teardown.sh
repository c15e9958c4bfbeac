#!/bin/sh
# exit-teardown.sh: after a run that succeeded the program leaves its
# graphs' memory to the exit instead of freeing it op by op; what has an
# effect outside the process still happens: every finalizer runs (a
# user __gc, a file of the io library left open and unflushed), the
# output is whole, and no temp file is left.  GEREWRITE_TEARDOWN=1 (the
# full teardown) gives the same.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
TOP=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-exit.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$TOP/t/testlib.sh"

run "$BIN" convert "$TOP/doc/examples/small_cnn.pbtxt" "$T/model.pb"
is_rc 0 "the small CNN as a binary GraphDef"

mkdir "$T/rec"
cat >"$T/rec/leave_open.lua" <<LUA
return {
  name = "leave_open",
  description = "leaves a file open and an object with a finalizer",
  params = {},
  run = function(g)
    local f = io.open("$T/" .. os.getenv("TAG") .. ".io", "w")
    f:write("written, never closed")
    kept_file = f
    kept_obj = setmetatable({}, {__gc = function()
      local m = io.open("$T/" .. os.getenv("TAG") .. ".gc", "w")
      m:write("finalized with ", #g, " ops")
      m:close()
    end})
    g:add_op{name = "extra", type = "NoOp"}
  end,
}
LUA
cat >"$T/script.lua" <<LUA
local g = ge.load(arg[1])
local f = io.open("$T/" .. os.getenv("TAG") .. ".io", "w")
f:write("written, never closed")
obj = setmetatable({}, {__gc = function()
  local m = io.open("$T/" .. os.getenv("TAG") .. ".gc", "w")
  m:write("finalized with ", #g, " ops")
  m:close()
end})
g:save(arg[2])
LUA

check() { # check TAG TEARDOWN NAME CMD...
	tag=$1 td=$2 name=$3
	shift 3
	TAG=$tag GEREWRITE_TEARDOWN=$td GEREWRITE_PATH=$T/rec run "$@"
	is_rc 0 "$name"
	test "`cat "$T/$tag.io" 2>/dev/null`" = "written, never closed"
	ok $? "$name: the file left open is flushed at exit"
	grep "^finalized with [0-9][0-9]* ops$" "$T/$tag.gc" >/dev/null
	ok $? "$name: the user finalizer ran"
	ls "$T" | grep -v -e '\.io$' -e '\.gc$' -e '\.pb$' -e '^rec$' \
		-e '^script.lua$' -e '^out$' -e '^err$' -e '^left$' >"$T/left"
	test ! -s "$T/left"
	ok $? "$name: no temp file is left"
}
check run0 0 "gerewrite run" "$BIN" run leave_open "$T/model.pb" -o "$T/run0.pb"
check run1 1 "gerewrite run, full teardown" \
	"$BIN" run leave_open "$T/model.pb" -o "$T/run1.pb"
cmp "$T/run0.pb" "$T/run1.pb" >/dev/null
ok $? "gerewrite run: the same output either way"
grep "^finalized with 13 ops$" "$T/run0.gc" >/dev/null
ok $? "gerewrite run: the finalizer still sees the graph (12 ops + 1)" || \
	diag "$T/run0.gc"
check s0 0 "a script" "$BIN" "$T/script.lua" "$T/model.pb" "$T/s0.pb"
check s1 1 "a script, full teardown" \
	"$BIN" "$T/script.lua" "$T/model.pb" "$T/s1.pb"
cmp "$T/s0.pb" "$T/model.pb" >/dev/null && cmp "$T/s1.pb" "$T/model.pb"
ok $? "a script: the saved graph is the loaded one"

echo "1..$n"
exit $failed
