#!/bin/sh
# cli-noise-seeds.sh: insert_noise numbers its sites (seed2) through a
# model: the graph's sites first, then each function body's after those
# before it, so no two sites of one model draw the same noise; each model
# of a batch is numbered alone; seed=-1 gives every site 0; --functions
# none numbers the graph only.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-seeds.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"
GEREWRITE_PATH=${GE_TOP_SRCDIR:-.}/scripts
export GEREWRITE_PATH

F='attr { key: "T" value { type: DT_FLOAT } }'
CALL='op: "PartitionedCall"
  attr { key: "Tin" value { list { type: DT_FLOAT } } }
  attr { key: "Tout" value { list { type: DT_FLOAT } } }'
# a Relu in the graph, one in the body of f, two in that of g
mkdir -p "$T/in"
cat >"$T/in/m.pbtxt" <<END
node { name: "in" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "r0" op: "Relu" input: "in" $F }
node { name: "n0" op: "Neg" input: "r0" $F }
node { name: "cf" $CALL input: "n0" attr { key: "f" value { func { name: "f" } } } }
node { name: "cg" $CALL input: "cf" attr { key: "f" value { func { name: "g" } } } }
library {
  function {
    signature { name: "f" input_arg { name: "x" type: DT_FLOAT }
                output_arg { name: "y" type: DT_FLOAT } }
    node_def { name: "r" op: "Relu" input: "x" $F }
    node_def { name: "id" op: "Identity" input: "r:activations:0" $F }
    ret { key: "y" value: "id:output:0" } }
  function {
    signature { name: "g" input_arg { name: "x" type: DT_FLOAT }
                output_arg { name: "y" type: DT_FLOAT } }
    node_def { name: "r" op: "Relu" input: "x" $F }
    node_def { name: "r2" op: "Relu" input: "r:activations:0" $F }
    node_def { name: "id" op: "Identity" input: "r2:activations:0" $F }
    ret { key: "y" value: "id:output:0" } }
}
END
cp "$T/in/m.pbtxt" "$T/in/m2.pbtxt"

# seeds MODEL: "<where>:<op>=<seed2>" of every RandomStandardNormal, the
# graph's first, then each body's
seeds() {
	M=$1 "$BIN" -e '
local g = assert(ge.load(os.getenv("M")))
local out = {}
local function walk(h, where)
  for _, op in ipairs(h:ops("RandomStandardNormal")) do
    out[#out + 1] = where .. ":" .. op.name .. "=" .. op:attr("seed2")
  end
end
walk(g, "graph")
for _, f in ipairs(g:functions()) do walk(f:graph(), f.name) end
io.write(table.concat(out, " "), " ", tostring((g:validate())), "\n")'
}
NUMBERED="graph:r0/noise/random=1 f:r/noise/random=2 g:r/noise/random=3 g:r2/noise/random=4 true"

run "$BIN" run insert_noise "$T/in/m.pbtxt" -o "$T/out.pbtxt" -p types=Relu
is_rc 0 "insert_noise on a graph and two bodies"
got=`seeds "$T/out.pbtxt"`
test "$got" = "$NUMBERED"
ok $? "seed2 counts on through the bodies ($got)"

run "$BIN" run insert_noise "$T/in/m.pbtxt" -o "$T/nd.pbtxt" -p types=Relu \
	-p seed=-1
is_rc 0 "seed=-1"
got=`seeds "$T/nd.pbtxt"`
test "$got" = "graph:r0/noise/random=0 f:r/noise/random=0 g:r/noise/random=0 g:r2/noise/random=0 true"
ok $? "seed=-1: seed2 0 everywhere ($got)"

run "$BIN" run insert_noise "$T/in/m.pbtxt" -o "$T/top.pbtxt" -p types=Relu \
	--functions none
is_rc 0 "--functions none"
got=`seeds "$T/top.pbtxt"`
test "$got" = "graph:r0/noise/random=1 true"
ok $? "--functions none: the graph's site only ($got)"

run "$BIN" batch insert_noise "$T/in" -o "$T/b" -p types=Relu -q
is_rc 0 "a batch of two copies"
a=`seeds "$T/b/m.pbtxt"`
b=`seeds "$T/b/m2.pbtxt"`
test "$a" = "$NUMBERED" && test "$b" = "$NUMBERED"
ok $? "each model of the batch is numbered from 1 ($a | $b)"

echo "1..$n"
exit $failed
