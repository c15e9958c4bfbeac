#!/bin/sh
# cli-commands.sh: the subcommands on models the test writes: convert,
# validate, info, diff, dot, run (recipes, parameters, exit codes, error
# messages), help for commands and recipes, the recipe search path.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-cmd.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"
hasnt() { # hasnt FILE TEXT NAME
	! grep -F -e "$2" "$1" >/dev/null
	ok $? "$3"
}
one_line() { # one_line NAME: stderr is exactly one line
	test `wc -l <"$T/err"` -eq 1
	s=$?
	ok $s "$1"
	if test $s -ne 0; then diag "$T/err"; fi
}

# ---------------------------------------------------------------- models
cat >"$T/mk.lua" <<'EOF'
local F = "float32"
local g = ge.graph()
g:add_op{type = "Placeholder", name = "x", attrs = {dtype = F, shape = ge.shape{-1, 4}}}
g:add_op{type = "Const", name = "w", attrs = {dtype = F,
         value = ge.tensor_value(F, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}}
g:add_op{type = "MatMul", name = "dense/mm", inputs = {"x", "w"}, attrs = {T = F}}
g:add_op{type = "Relu", name = "dense/relu", inputs = {"dense/mm"}, attrs = {T = F}}
g:add_op{type = "Identity", name = "y", inputs = {"dense/relu"}, attrs = {T = F}}
assert(g:save(arg[1]))
EOF
run "$BIN" "$T/mk.lua" "$T/m.pb"
is_rc 0 "writing a model"

# ---------------------------------------------------------------- convert
run "$BIN" convert "$T/m.pb" "$T/m.pbtxt"
is_rc 0 "convert to text"
has "$T/m.pbtxt" 'name: "dense/mm"' "the output is a text GraphDef"
run "$BIN" convert "$T/m.pbtxt" "$T/back.pb"
is_rc 0 "convert back to binary"
cmp -s "$T/m.pb" "$T/back.pb"
ok $? "binary -> text -> binary gives the same bytes"
run "$BIN" convert "$T/m.pb" "$T/forced" --format graphdef-text
has "$T/forced" 'op: "MatMul"' "--format decides the output format"
run "$BIN" convert "$T/m.pb" "$T/meta.meta" --format meta
is_rc 0 "convert a GraphDef to a MetaGraphDef"
run "$BIN" validate -q "$T/meta.meta"
is_rc 0 "which loads and validates"
cp "$T/m.pb" "$T/keep.pb"
run "$BIN" convert "$T/m.pb" "$T/m.pb"
is_rc 2 "convert onto the input"
one_line "refused in one line"
cmp -s "$T/m.pb" "$T/keep.pb"
ok $? "the input is untouched"
run "$BIN" convert "$T/m.pb" "$T/no/such/dir/out.pb"
is_rc 2 "convert into a missing directory"
has "$T/err" "$T/no/such/dir/out.pb" "names the output"
run "$BIN" convert "$T/m.pb"
is_rc 2 "convert without OUT"
has "$T/err" "gerewrite convert: IN and OUT are needed" "says what is missing"
run "$BIN" convert "$T/m.pb" "$T/x.pb" --format nope
is_rc 2 "an unknown format"
has "$T/err" "unknown format 'nope'" "is named"
test ! -e "$T/x.pb"
ok $? "and nothing is written"
run "$BIN" convert "$T/m.pb" "$T/x.pb" --bogus
is_rc 2 "an unknown option"
has "$T/err" "gerewrite convert: unknown option '--bogus'" "is named"

# ---------------------------------------------------------------- validate
run "$BIN" validate "$T/m.pb"
is_rc 0 "validate a good model"
has "$T/out" "$T/m.pb: valid (5 ops)" "says it is valid"
cat >"$T/dangle.pbtxt" <<'EOF'
node { name: "a" op: "Identity" input: "missing:0" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "b" op: "Identity" input: "a:3" attr { key: "T" value { type: DT_FLOAT } } }
EOF
run "$BIN" validate "$T/dangle.pbtxt"
is_rc 1 "validate a model with problems"
test `wc -l <"$T/out"` -eq 2
ok $? "one line per problem"
has "$T/out" "$T/dangle.pbtxt: " "each starting with the file"
has "$T/out" "missing" "the dangling input is reported"
run "$BIN" validate "$T/none.pb"
is_rc 2 "validate a missing file"

# ---------------------------------------------------------------- info
run "$BIN" info "$T/m.pb"
is_rc 0 "info"
has "$T/out" "format:  graphdef" "shows the format"
has "$T/out" "ops:     5 (5 types)" "counts ops and types"
has "$T/out" "  x:0  float32[?,4]  (Placeholder)" "lists the input"
has "$T/out" "  y:0  float32[?,2]  (Identity)" "lists the output, with its inferred shape"
has "$T/out" "consts:  1, 48 B of values" "sizes Const values (as encoded)"

# ---------------------------------------------------------------- diff
run "$BIN" diff "$T/m.pb" "$T/m.pbtxt"
is_rc 0 "diff of the same graph in two formats"
test ! -s "$T/out"
ok $? "prints nothing"
run "$BIN" run rename_op "$T/m.pb" -o "$T/r.pb" -p old_op_name=Relu \
	-p new_op_name=Relu6
is_rc 0 "run rename_op"
run "$BIN" diff "$T/m.pb" "$T/r.pb"
is_rc 1 "diff of different graphs"
has "$T/out" "~ dense/relu (Relu6): type Relu -> Relu6" "shows the changed type"
has "$T/out" "0 removed, 0 added, 1 changed" "and counts"
run "$BIN" diff -q "$T/m.pb" "$T/r.pb"
is_rc 1 "diff -q"
test ! -s "$T/out"
ok $? "diff -q prints nothing"
run "$BIN" diff "$T/m.pb" "$T/none.pb"
is_rc 2 "diff with a missing model"

# ---------------------------------------------------------------- dot
run "$BIN" dot "$T/m.pb"
is_rc 0 "dot"
has "$T/out" "digraph" "writes DOT"
has "$T/out" 'label="mm\nMatMul"' "boxes name (within its scope's cluster) and type"
run "$BIN" dot "$T/m.pb" --scope dense -o "$T/d.dot"
is_rc 0 "dot --scope -o"
has "$T/d.dot" "shape=ellipse" "ops outside the scope are ellipses"
hasnt "$T/d.dot" 'label="y\nIdentity"' "and drawn without their type"
run "$BIN" dot "$T/r.pb" --highlight "$T/m.pb"
has "$T/out" "fillcolor=\"#f8d49a\"" "--highlight MODEL colours the changed op"
run "$BIN" dot "$T/m.pb" --highlight "x,y"
test `grep -c 'fillcolor="#f8d49a"' "$T/out"` -eq 2
ok $? "--highlight a,b colours those ops"
if command -v dot >/dev/null 2>&1; then
	run "$BIN" dot "$T/m.pb" -o "$T/m.svg"
	is_rc 0 "dot -o FILE.svg"
	has "$T/m.svg" "<svg" "writes SVG through Graphviz"
else
	ok 0 "# SKIP Graphviz is not installed"
	ok 0 "# SKIP Graphviz is not installed"
fi
GEREWRITE_DOT=/nonexistent/dot "$BIN" dot "$T/m.pb" -o "$T/n.svg" \
	>"$T/out" 2>"$T/err"
rc=$?
is_rc 2 "SVG without Graphviz"
has "$T/err" "Graphviz" "says Graphviz is needed"
test ! -e "$T/n.svg"
ok $? "and writes nothing"

# ---------------------------------------------------------------- run
mkdir "$T/recipes"
cat >"$T/recipes/twice.lua" <<'EOF'
return {
  description = "Doubles the output through another op.\n\nFor tests.",
  params = {
    {name = "op", type = "string", default = "y", help = "which op"},
    {name = "mode", type = "enum", choices = {"neg", "abs"}, default = "neg",
     help = "what to add"},
    {name = "fail", type = "bool", default = false, help = "fail on purpose"},
  },
  run = function(g, p)
    local x = g:op(p.op) or error("no op named " .. p.op)
    if p.fail then error("asked to fail") end
    local t = p.mode == "neg" and "Neg" or "Abs"
    g:add_op{type = t, name = x.name .. "_" .. p.mode, inputs = {x:output(0)},
             attrs = {T = "float32"}}
  end,
}
EOF
printf 'return {description = "d", run = function(g) error("boom") end}\n' \
	>"$T/recipes/boom.lua"
printf 'return {description = "d",\n  run = function(g) g:op("x").\nend}\n' \
	>"$T/recipes/broken.lua"
printf 'return {description = "d", run = function(g)\n  return undefined_name\nend}\n' \
	>"$T/recipes/undef.lua"
printf 'return {description = "new graph", run = function(g)\n  local h = ge.graph()\n  h:add_op{type = "NoOp", name = "only"}\n  return h\nend}\n' \
	>"$T/recipes/fresh.lua"
GEREWRITE_PATH="$T/recipes"
export GEREWRITE_PATH

run "$BIN" run twice "$T/m.pb" -o "$T/t.pb"
is_rc 0 "run a recipe found on GEREWRITE_PATH"
run "$BIN" info "$T/t.pb"
has "$T/out" "1  Neg" "the recipe ran"
run "$BIN" run twice "$T/m.pb" -o "$T/t2.pbtxt" --param mode=abs -p op=x
is_rc 0 "run with parameters"
has "$T/t2.pbtxt" 'name: "x_abs"' "the parameters reached the recipe"
run "$BIN" run "$T/recipes/twice.lua" "$T/m.pb" -o "$T/t3.pb"
is_rc 0 "a recipe given as a path"

run "$BIN" run twice "$T/never-read.pb" -o "$T/t4.pb" --param mode=sum
is_rc 2 "a bad enum value"
has "$T/err" "twice: parameter 'mode' must be one of neg, abs (got 'sum')" \
	"names the parameter and the choices"
hasnt "$T/err" "never-read.pb" "before the model is read"
run "$BIN" run twice "$T/never-read.pb" -o "$T/t4.pb" --param size=3
is_rc 2 "an unknown parameter"
has "$T/err" "unknown parameter 'size' (it has op, mode, fail)" "lists the known ones"
run "$BIN" run twice "$T/never-read.pb" -o "$T/t4.pb" --param fail=perhaps
is_rc 2 "a bad bool"
run "$BIN" run twice "$T/none.pb" -o "$T/t4.pb"
is_rc 2 "a missing model"
has "$T/err" "$T/none.pb" "names it"
run "$BIN" run nosuch "$T/m.pb" -o "$T/t4.pb"
is_rc 2 "an unknown recipe"
has "$T/err" "no recipe named 'nosuch'" "says so"
run "$BIN" run broken "$T/m.pb" -o "$T/t4.pb"
is_rc 3 "a recipe that does not compile"
has "$T/err" "gerewrite: $T/recipes/broken.lua:3:" "names its file and line"
one_line "in one line"
run "$BIN" run boom "$T/m.pb" -o "$T/t4.pb"
is_rc 1 "a recipe that fails"
has "$T/err" "gerewrite: $T/recipes/boom.lua:1: boom (model $T/m.pb)" \
	"names the recipe file, the line and the model"
one_line "in one line"
test ! -e "$T/t4.pb"
ok $? "no output after a failure"
run "$BIN" run undef "$T/m.pb" -o "$T/t4.pb"
is_rc 1 "a recipe reading an undefined global"
has "$T/err" "undef.lua:2: undefined global 'undefined_name'" "is an error"
run "$BIN" run twice "$T/m.pb" -o "$T/t4.pb" -p op=nope
is_rc 1 "a recipe raising from its parameters"
run "$BIN" run fresh "$T/m.pb" -o "$T/f.pb"
is_rc 0 "a recipe returning a new graph"
run "$BIN" info "$T/f.pb"
has "$T/out" "ops:     1 (1 types)" "that graph is saved"
run "$BIN" run twice "$T/m.pb"
is_rc 2 "run without -o"
has "$T/err" "-o OUT" "says so"
run "$BIN" run twice "$T/m.pb" -o "$T/m.pb"
is_rc 2 "run onto the input"
cmp -s "$T/m.pb" "$T/keep.pb"
ok $? "leaves the input untouched"

# ---------------------------------------------------------------- help
run "$BIN" help twice
is_rc 0 "help RECIPE"
has "$T/out" "twice: Doubles the output through another op." "shows the description"
has "$T/out" "  mode (neg|abs, default neg)" "and the parameters"
run "$BIN" help
has "$T/out" "  twice                        Doubles the output through another op." \
	"help lists recipes with their summary"
has "$T/out" "  insert_noise" "including the shipped ones"
run "$BIN" help run
has "$T/out" "Usage: gerewrite run RECIPE MODEL (-o OUT | --overwrite)" "help COMMAND"
run "$BIN" help broken
is_rc 3 "help of a broken recipe"
printf 'return {description = "shadow", run = print}\n' >"$T/recipes/rename_op.lua"
run "$BIN" help rename_op
has "$T/out" "rename_op: shadow" "GEREWRITE_PATH comes before the installed recipes"

# ---------------------------------------------------------------- man page
MAN=${GE_TOP_SRCDIR:-.}/doc/gerewrite.1
if test -f "$MAN"; then
	missing=""
	for cmd in run batch convert validate info diff dot help version; do
		grep -e "^\.SS $cmd" "$MAN" >/dev/null || missing="$missing $cmd"
		"$BIN" help $cmd 2>/dev/null | grep -o -e '--[a-z][a-z-]*' |
			sort -u >"$T/opts"
		while read o; do
			m=$(printf '%s' "$o" | sed 's/-/\\-/g')
			grep -F -e "$m" "$MAN" >/dev/null || missing="$missing $cmd:$o"
		done <"$T/opts"
	done
	for r in `ls "${GE_TOP_SRCDIR:-.}/scripts" | sed -n 's/\.lua$//p'`; do
		grep -e "^\.BR $r" "$MAN" >/dev/null || missing="$missing recipe:$r"
	done
	test -z "$missing"
	ok $? "the man page documents every command, option and recipe"
	test -z "$missing" || echo "# missing:$missing"
fi

echo "1..$n"
exit $failed
