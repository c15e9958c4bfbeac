#!/bin/sh
# cli-func-fast.sh: the check of calls that `gerewrite run` makes after a
# load reads only the ops whose attrs name a function (one op of each
# class of same type and attr bytes is looked at during the load) and the
# op types.  Where that could go wrong, it still refuses what the full
# walk refuses: a call hidden in an op identical to a sound one but for
# its func attr, in an attr no OpDef declares, in a list(func), in the
# second of two ops of the same class, a call by type with the wrong
# arity from an op whose twin is sound; an edit after the load is checked
# by the full walk.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-ffast.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

PH='op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }'
ID='op: "Identity" input: "in" attr { key: "T" value { type: DT_FLOAT } }'

# nodes FILE LIBRARY NODES...: a GraphDef of Placeholder `in`, a few
# sound Identity ops, the given nodes, and the library text.
nodes() {
	f=$1
	lib=$2
	shift 2
	{
		echo "node { name: \"in\" $PH }"
		for i in 1 2 3; do echo "node { name: \"id$i\" $ID }"; done
		for nd in "$@"; do echo "node { $nd }"; done
		echo "$lib"
	} >"$f"
}

# refused NAME FILE TEXT
refused() {
	rm -f "$T/out.pbtxt"
	run "$BIN" run insert_noise "$2" -o "$T/out.pbtxt"
	is_rc 2 "$1: refused"
	has "$T/err" "$3" "$1: named"
	test ! -e "$T/out.pbtxt"
	ok $? "$1: nothing written"
}

CALL='op: "PartitionedCall" input: "in"
  attr { key: "Tin" value { list { type: DT_FLOAT } } }
  attr { key: "Tout" value { list { type: DT_FLOAT } } }'
LIB='library { function {
  signature { name: "f" input_arg { name: "x" type: DT_FLOAT }
              output_arg { name: "y" type: DT_FLOAT } }
  node_def { name: "id" op: "Identity" input: "x"
             attr { key: "T" value { type: DT_FLOAT } } }
  ret { key: "y" value: "id:output:0" } } }'

nodes "$T/twin.pbtxt" '' \
	"name: \"c1\" $CALL attr { key: \"f\" value { func { name: \"nope\" } } }" \
	"name: \"c2\" $CALL attr { key: \"f\" value { func { name: \"nope\" } } }"
refused "two ops of one class, no library" "$T/twin.pbtxt" \
	"node 'c1': attr 'f' names function 'nope', which is not in the library"

nodes "$T/hidden.pbtxt" '' \
	"name: \"h\" $ID attr { key: \"_g\" value { func { name: \"gone\" } } }"
refused "an attr no OpDef declares" "$T/hidden.pbtxt" \
	"node 'h': attr '_g' names function 'gone', which is not in the library"

nodes "$T/list.pbtxt" "$LIB" \
	"name: \"ok\" $CALL attr { key: \"f\" value { func { name: \"f\" } } }" \
	"name: \"l\" $ID attr { key: \"_fs\" value { list { func { name: \"f\" } func { name: \"lost\" } } } }"
refused "a list(func) naming a missing function" "$T/list.pbtxt" \
	"node 'l': attr '_fs' names function 'lost', which is not in the library"

nodes "$T/bytype.pbtxt" "$LIB" \
	'name: "t1" op: "f" input: "in"' \
	'name: "t2" op: "f" input: "in" input: "id1"'
refused "a call by type, the second of its class" "$T/bytype.pbtxt" \
	"node 't2' (f) calls function 'f' with 2 inputs, but it takes 1"

# the sound forms of the same models run
nodes "$T/good.pbtxt" "$LIB" \
	"name: \"c1\" $CALL attr { key: \"f\" value { func { name: \"f\" } } }" \
	"name: \"c2\" $CALL attr { key: \"f\" value { func { name: \"f\" } } }" \
	'name: "t1" op: "f" input: "in"' \
	"name: \"l\" $ID attr { key: \"_fs\" value { list { func { name: \"f\" } } } }"
run "$BIN" run insert_noise "$T/good.pbtxt" -o "$T/good-out.pbtxt" \
	--param types=Identity
is_rc 0 "the sound model runs"
has "$T/good-out.pbtxt" 'id/noise/add' "with its noise in the body"

# an edit after the load: validate walks every op again
cat >"$T/edit.lua" <<EOF
local g = ge.load("$T/good.pbtxt")
local okv = g:validate()
assert(okv, "sound before the edit")
g:op("id3"):set_attr("_h", {name = "absent"}, "func")
local ok2, probs = g:validate()
assert(not ok2, "the edit is seen")
assert(table.concat(probs, "\n"):find("node 'id3': attr '_h' names " ..
  "function 'absent', which is not in the library", 1, true),
  table.concat(probs, "\n"))
EOF
run "$BIN" "$T/edit.lua"
is_rc 0 "a func attr set after the load is reported by validate"

echo "1..$n"
exit $failed
