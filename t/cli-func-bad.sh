#!/bin/sh
# cli-func-bad.sh: models whose function library cannot run are refused
# by `gerewrite run` before the recipe: a call to a function that is not
# in the library, a body reading an arg that does not exist, a function
# calling itself, a call with the wrong number of inputs.  Each gives exit
# status 2 and one line on stderr naming the file, the function and the
# node, and writes nothing.  The same model, repaired, runs.  validate
# lists the problems of bodies.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-fbad.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

# model FILE CALLEE CALL_INPUTS NODE_INPUT EXTRA_NODE: a GraphDef whose
# PartitionedCall `call` calls CALLEE with CALL_INPUTS, and whose library
# function f returns Identity `id` of NODE_INPUT (plus EXTRA_NODE).
model() {
	cat >"$1" <<EOF
node { name: "in" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "call" op: "PartitionedCall" $3
  attr { key: "Tin" value { list { type: DT_FLOAT } } }
  attr { key: "Tout" value { list { type: DT_FLOAT } } }
  attr { key: "f" value { func { name: "$2" } } } }
library {
  function {
    signature { name: "f" input_arg { name: "x" type: DT_FLOAT }
                output_arg { name: "y" type: DT_FLOAT } }
    node_def { name: "id" op: "Identity" input: "$4"
               attr { key: "T" value { type: DT_FLOAT } } }
    $5
    ret { key: "y" value: "id:output:0" }
  }
}
EOF
}

# refused NAME FILE PATTERN
refused() {
	rm -f "$T/out.pbtxt"
	run "$BIN" run insert_noise "$2" -o "$T/out.pbtxt" --param types=Identity
	is_rc 2 "$1: refused"
	lines=`wc -l <"$T/err"`
	test "$lines" -eq 1
	ok $? "$1: one line on stderr"
	grep -E -e "$3" "$T/err" >/dev/null
	s=$?
	ok $s "$1: the message names the file, the function and the node"
	if test $s -ne 0; then diag "$T/err"; fi
	test ! -e "$T/out.pbtxt"
	ok $? "$1: nothing written"
}

model "$T/good.pbtxt" f 'input: "in"' x ''
run "$BIN" run insert_noise "$T/good.pbtxt" -o "$T/good-out.pbtxt" \
	--param types=Identity
is_rc 0 "the sound model runs"
has "$T/good-out.pbtxt" 'id/noise/add:z:0' "the noise is inside the body"

model "$T/missing.pbtxt" nope 'input: "in"' x ''
refused "a call to a missing function" "$T/missing.pbtxt" \
	"missing.pbtxt: node 'call': attr 'f' names function 'nope', which is not in the library"

model "$T/noarg.pbtxt" f 'input: "in"' z ''
refused "a body reading a missing arg" "$T/noarg.pbtxt" \
	"noarg.pbtxt: function 'f': node 'id': input 'z' names no node or arg"

model "$T/self.pbtxt" f 'input: "in"' x \
	'node_def { name: "again" op: "PartitionedCall" input: "x"
	  attr { key: "Tin" value { list { type: DT_FLOAT } } }
	  attr { key: "Tout" value { list { type: DT_FLOAT } } }
	  attr { key: "f" value { func { name: "f" } } } }'
refused "a function calling itself" "$T/self.pbtxt" \
	"self.pbtxt: function 'f': node 'again' calls 'f' recursively"

model "$T/arity.pbtxt" f 'input: "in" input: "in"' x ''
refused "a call with the wrong arity" "$T/arity.pbtxt" \
	"arity.pbtxt: node 'call' \(PartitionedCall\) calls function 'f' with 2 inputs, but it takes 1"

run "$BIN" validate "$T/noarg.pbtxt"
is_rc 1 "validate lists the problems of bodies"
has "$T/out" "function 'f': node 'id': input 'z' names no op in the graph" \
	"naming the function and the node"
run "$BIN" validate "$T/good.pbtxt"
is_rc 0 "validate of a sound library"

run "$BIN" run insert_noise "$T/good.pbtxt" -o "$T/x.pbtxt" --functions some
is_rc 2 "--functions takes reachable, all or none"

echo "1..$n"
exit $failed
