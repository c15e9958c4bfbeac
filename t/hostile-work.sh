#!/bin/sh
# hostile-work.sh: the work budget from the command line.  --max-work N
# (before the command, as --max-memory) and GEREWRITE_MAX_WORK hold every
# kernel of a fold; the fold site over it is left as it was and named in
# the report; a bad count is a usage error.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
SRC=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-work.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$SRC/t/testlib.sh"

# a MatMul of two 64x64 splats: 2^18 multiply-adds, 87 bytes of model
cat >"$T/mm.pbtxt" <<'G'
node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT
    tensor_shape { dim { size: 64 } dim { size: 64 } } float_val: 1 } } } }
node { name: "b" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT
    tensor_shape { dim { size: 64 } dim { size: 64 } } float_val: 2 } } } }
node { name: "mm" op: "MatMul" input: "a" input: "b"
  attr { key: "T" value { type: DT_FLOAT } } }
G

run "$BIN" --max-work 100000 run fold_constants "$T/mm.pbtxt" -o "$T/o1.pbtxt"
is_rc 0 "fold_constants under --max-work 100000"
has "$T/err" "op 'mm' (MatMul) left as it was" "the MatMul is named in the report"
has "$T/err" "work budget" "with the work budget as the reason"
has "$T/o1.pbtxt" 'op: "MatMul"' "and is still a MatMul"

run env GEREWRITE_MAX_WORK=100k "$BIN" run fold_constants "$T/mm.pbtxt" \
	-o "$T/o2.pbtxt"
has "$T/err" "work budget" "GEREWRITE_MAX_WORK=100k holds it too"

run "$BIN" --max-work=1M run fold_constants "$T/mm.pbtxt" -o "$T/o3.pbtxt"
is_rc 0 "--max-work=1M"
has "$T/o3.pbtxt" 'op: "Const"' "is enough to fold it"

run "$BIN" --max-work lots info "$T/mm.pbtxt"
is_rc 2 "--max-work with a bad count"
has "$T/err" "--max-work: bad count 'lots'" "says what is wrong"

run "$BIN" --help
has "$T/out" "--max-work N" "--help lists --max-work"
has "$T/out" "GEREWRITE_MAX_WORK" "and its variable"

echo "1..$n"
exit $failed
