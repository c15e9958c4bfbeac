#!/bin/sh
# batch-scan.sh: what `gerewrite batch` finds in a directory of real
# models: files named like models that hold an OpList or a config are
# skipped with the reason (a clean tree exits 0), TensorFlow.js model.json
# files are run (their weight shards read with them and written back),
# chunked SavedModels are skipped as not supported yet, .graphdef
# files are models and the help says so; the progress line shows the
# path relative to the input directory, cut from the left (on a terminal,
# through tmux, skipped without it).
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
case $BIN in /*) ;; *) BIN=`pwd`/$BIN ;; esac
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-bscan.XXXXXX"` || exit 1
SOCK=gerewrite-bscan-$$
trap 'tmux -L "$SOCK" kill-server >/dev/null 2>&1; rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

cat >"$T/mk.lua" <<'LUA'
local F = "float32"
local g = ge.graph()
g:add_op{type = "Placeholder", name = "x", attrs = {dtype = F}}
g:add_op{type = "Relu", name = "r", inputs = {"x"}, device = "/cpu:0", attrs = {T = F}}
assert(g:save(arg[1]))
LUA
mkdir -p "$T/in/models" "$T/in/ops" "$T/in/web/m1" "$T/in/chunked"
"$BIN" "$T/mk.lua" "$T/in/models/a.pb" &&
	cp "$T/in/models/a.pb" "$T/in/models/b.graphdef"
ok $? "the tree is written"
printf 'op {\n  name: "Relu"\n}\nop {\n  name: "Add"\n}\n' >"$T/in/ops/ops.pbtxt"
printf '# a compiler config\nfeed {\n  id { node_name: "x" }\n}\n' \
	>"$T/in/ops/layer.config.pbtxt"
printf 'riegeli-chunks' >"$T/in/chunked/saved_model.cpb"
cat >"$T/in/web/m1/model.json" <<'JSON'
{"format": "graph-model", "generatedBy": "test", "convertedBy": "test",
 "modelTopology": {"node": [
   {"name": "x", "op": "Placeholder", "attr": {"dtype": {"type": "DT_FLOAT"}, "shape": {"shape": {"dim": [{"size": "2"}]}}}},
   {"name": "w", "op": "Const", "attr": {"dtype": {"type": "DT_FLOAT"}, "value": {"tensor": {"dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "2"}]}}}}},
   {"name": "y", "op": "Mul", "input": ["x", "w"], "device": "/cpu:0", "attr": {"T": {"type": "DT_FLOAT"}}}],
  "versions": {"producer": 1}},
 "weightsManifest": [{"paths": ["group1-shard1of1.bin"], "weights": [{"name": "w", "shape": [2], "dtype": "float32"}]}]}
JSON
printf '\000\000\200\077\000\000\000\100' >"$T/in/web/m1/group1-shard1of1.bin"
printf '{"not": "a model"}\n' >"$T/in/web/settings.json"

"$BIN" batch remove_device "$T/in" -o "$T/out" --report "$T/r.json" \
	>"$T/stdout" 2>"$T/err"
rc=$?
is_rc 0 "a tree of models and other files is clean"
has "$T/stdout" "6 models: 3 done, 0 failed, 3 skipped" "the summary counts the skipped"
has "$T/stdout" "skipped $T/in/ops/ops.pbtxt: an OpList (op definitions), not a model" \
	"an OpList is skipped with the reason"
has "$T/stdout" "skipped $T/in/ops/layer.config.pbtxt: a text proto whose first field is 'feed'" \
	"a config text proto is skipped with the reason"
has "$T/stdout" "skipped $T/in/chunked: chunked SavedModel: not supported yet" \
	"a chunked SavedModel is skipped as not supported yet"
has "$T/r.json" '"reason": "an OpList (op definitions), not a model"' \
	"the report gives the reason"
test -f "$T/out/web/m1/model.json" && ! test -e "$T/out/web/settings.json" &&
	! test -e "$T/out/web/settings"
ok $? "a TensorFlow.js model.json is found and written back, a JSON file that is no model is not"
cat >"$T/check.lua" <<'LUA'
local g = assert(ge.load(arg[1]))
assert(g:op("y").device == "", "the device is still there")
local v = g:op("w"):attr("value")
assert(v[2] == 2.0, "the weights are not those of the shard")
LUA
"$BIN" "$T/check.lua" "$T/out/web/m1/model.json" 2>"$T/e"
ok $? "with the recipe applied and its weights from the shard"
diag "$T/e"
test -f "$T/out/models/b.graphdef"
ok $? "a .graphdef file is a model"
"$BIN" help batch >"$T/help" 2>&1
has "$T/help" ".graphdef" "the batch help lists .graphdef"
has "$T/help" "model.json" "and TensorFlow.js model.json"
"$BIN" info "$T/in/chunked" >/dev/null 2>"$T/err"
has "$T/err" "chunked SavedModel: not supported yet" "info says so for a chunked SavedModel"
"$BIN" info "$T/in/chunked/saved_model.cpb" >/dev/null 2>"$T/err"
has "$T/err" "saved_model.cpb: chunked SavedModel: not supported yet" "and for its .cpb file"

# a corrupt binary model still fails
head -c 20 "$T/in/models/a.pb" >"$T/in/models/broken.pb"
"$BIN" batch remove_device "$T/in" -o "$T/out2" >"$T/stdout" 2>"$T/err"
rc=$?
is_rc 1 "a broken file named like a model still fails"

# ---------------------------------------------------------------- progress
if ! command -v tmux >/dev/null 2>&1; then
	echo "ok 99 # SKIP tmux is not installed: no progress line test"
else
	rm -f "$T/in/models/broken.pb"
	deep="$T/in/a-rather-long-directory-name/another-long-directory-name/yet-another-level"
	mkdir -p "$deep"
	cp "$T/in/models/a.pb" "$deep/the-model-at-the-end.pb"
	cat >"$T/slow.lua" <<'LUA'
return {description = "waits", run = function(g) os.execute("sleep 2") end}
LUA
	# stderr is the terminal, stdout not
	tmux -L "$SOCK" -f /dev/null new-session -d -s b -x 200 -y 20 \
		"'$BIN' batch '$T/slow.lua' '$T/in' -o '$T/out3' >/dev/null; sleep 30"
	i=0
	while test $i -lt 300; do
		tmux -L "$SOCK" capture-pane -p -t b >"$T/screen" 2>/dev/null
		grep -F 'the-model-at-the-end.pb' "$T/screen" >/dev/null && break
		sleep 0.1
		i=`expr $i + 1`
	done
	grep -F '...' "$T/screen" | grep -F 'yet-another-level/the-model-at-the-end.pb' >/dev/null
	s=$?
	ok $s "the progress line keeps the end of a long path, cut from the left"
	if test $s -ne 0; then diag "$T/screen"; fi
	! grep -F "$T/in" "$T/screen" >/dev/null
	ok $? "relative to the input directory"
	line=`grep -F 'the-model-at-the-end' "$T/screen" | head -1`
	test ${#line} -le 80
	ok $? "and fits the line (${#line} columns)"
fi

echo "1..$n"
exit $failed
