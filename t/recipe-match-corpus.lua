-- recipe-match-corpus.lua: the ge.match recipes on real TensorFlow models:
-- fold_constant_mul on a frozen MobileNet-style graph (batch norms left as
-- Mul/Add after depthwise convs), fuse_conv_bias_relu on Keras and TF 1.x
-- conv nets, remove_identity_chains on graphs with control flow.  Counts
-- of sites are exact; every result validates and reloads.
local tap = require "tap"
local ok, is, same = tap.ok, tap.is, tap.same
local recipe = require "gerewrite.recipe"
local m = ge.match

local C = tap.corpus()
if not C then tap.skip_all("corpus not found") end
local lib = require "testlib"
local load, run = lib.recipe, lib.run_recipe

local FOLD, IDS, FUSE = load("fold_constant_mul"),
  load("remove_identity_chains"), load("fuse_conv_bias_relu")

local function count(g, pat)
  local n = 0
  for _ in g:matches(pat) do n = n + 1 end
  return n
end

local function ntype(g, t)
  local n = 0
  for _, op in ipairs(g:ops()) do if op.type == t then n = n + 1 end end
  return n
end

-- validates, and reads back the same after a round trip
local function sound(g, what)
  local good, problems = g:validate()
  ok(good, what .. ": validates")
  if not good then tap.diag(table.concat(problems, "\n")) end
  local back = ge.parse(g:serialize())
  is(#g, back and #back, what .. ": reloads with the same ops")
end

-- ================================================================ fold
-- faceres-deep: 13 DepthwiseConv2dNative -> Mul(scale) -> Add(offset).
do
  local g = assert(ge.load(C .. "/large/faceres-deep.frozen.pb"))
  local sites = {}
  for hit in g:matches(FOLD.pattern()) do
    sites[#sites + 1] = {mul = hit[1].name, conv = hit.conv.type, w = hit.w.name,
                         wv = hit.w:attr("value"), sv = hit.s:attr("value"),
                         reader = hit[1]:consumers()[1].name}
  end
  is(13, #sites, "fold: faceres-deep has 13 Mul-by-constant sites")
  local r = run(FOLD, g)
  is(13, r.folded, "fold: all 13 folded")
  is(0, ntype(g, "Mul"), "fold: no Mul left")
  -- every factor lands on its channel: weights [h, w, in, mult], output
  -- channel in * mult + j, computed here from the 4-d index
  local bad, checked = 0, 0
  for _, s in ipairs(sites) do
    local op = g:op(s.mul)
    local w = op and op.type == s.conv and op:input(1).op:attr("value")
    if not w then
      bad = bad + 1
    else
      local shp = s.wv.shape
      local C_, M = shp[3], shp[4]
      local old, new, sc = s.wv:totable(), w:totable(), s.sv:totable()
      for i = 0, #old - 1 do
        local ch = ((i // M) % C_) * M + i % M
        local want = old[i + 1] * sc[ch + 1]
        if math.abs(new[i + 1] - want) > 1e-6 * math.max(1, math.abs(want)) then
          bad = bad + 1
        end
        checked = checked + 1
      end
      if g:op(s.reader):input(0).op ~= op and g:op(s.reader):input(1).op ~= op then
        bad = bad + 1
      end
    end
  end
  is(0, bad, "fold: each depthwise conv took its Mul's name and scaled weights")
  is(3 * 3 * (32 + 64 + 128 * 2 + 256 * 2 + 512 * 6 + 1024), checked,
     "fold: ... every weight checked")
  sound(g, "fold faceres-deep")
end

-- ================================================================ fuse
local FUSE_MODELS = {
  {"SciSharp__TensorFlow.NET/graph/char_cnn_untrained.meta", 6},
  {"SciSharp__TensorFlow.NET/graph/word_cnn.meta", 3},
  {"tensorflow__tensorflow/tensorflow/python/compiler/tensorrt/model_tests/"
   .. "sample_model/saved_model.pb", 2},
}
for _, mdl in ipairs(FUSE_MODELS) do
  local path, n = mdl[1], mdl[2]
  local short = path:match("([^/]+/[^/]+)$")
  local g = assert(ge.load(C .. "/" .. path))
  local p = assert(recipe.params(FUSE, {}))
  local sites = {}
  for hit in g:matches(FUSE.pattern(p), {overlap = false}) do
    sites[#sites + 1] = {act = hit.act.name, x = hit.x.name, w = hit.w.name,
                         b = hit.b.name, strides = hit.conv:attr_raw("strides"),
                         padding = hit.conv:attr("padding")}
  end
  is(n, #sites, short .. ": " .. n .. " Conv2D -> BiasAdd -> Relu sites")
  local convs, relus = ntype(g, "Conv2D"), ntype(g, "Relu")
  is(n, run(FUSE, g).fused, short .. ": all fused")
  is(convs - n, ntype(g, "Conv2D"), short .. ": Conv2D ops gone")
  is(relus - n, ntype(g, "Relu"), short .. ": Relu ops gone")
  is(n, ntype(g, "_FusedConv2D"), short .. ": _FusedConv2D ops")
  local bad = 0
  for _, s in ipairs(sites) do
    local f = g:op(s.act)
    local good = f and f.type == "_FusedConv2D" and #f.inputs == 3 and
      f.inputs[1].name == s.x and f.inputs[2].name == s.w and
      f.inputs[3].name == s.b and f:attr_raw("strides") == s.strides and
      f:attr("padding") == s.padding and f:attr("T") == "float32" and
      tap.deepeq(f:attr("fused_ops"), {"BiasAdd", "Relu"})
    if not good then bad = bad + 1 end
  end
  is(0, bad, short .. ": each fused op reads the same x, filter and bias")
  sound(g, short)
end

-- ================================================================ identities
local chainp = m.op("Identity", m.op("Identity"))
do
  local path = "/SciSharp__TensorFlow.NET/graph/lstm_crf_ner.meta"
  local g = assert(ge.load(C .. path))
  is(276, ntype(g, "Identity"), "identities: lstm_crf_ner has 276 Identity ops")
  is(9, count(g, chainp), "identities: ... and 9 Identity -> Identity sites")
  local r = run(IDS, g)
  is(14, r.removed, "identities: 14 removed by default")
  is(4, count(g, chainp), "identities: ... 4 chain sites left (control edges)")
  sound(g, "identities lstm_crf_ner")
  g = assert(ge.load(C .. path))
  r = run(IDS, g, {"control_inputs=move"})
  is(183, r.removed, "identities: 183 with control_inputs=move")
  is(0, count(g, chainp), "identities: ... no chain left")
  is(2, r.passes, "identities: ... in one pass and a check")
  sound(g, "identities lstm_crf_ner move")
end

do
  local g = assert(ge.load(C .. "/SciSharp__TensorFlow.NET/graph/kmeans.meta"))
  is(6, run(IDS, g).removed, "identities: kmeans: 6 removed (cond pivots stay)")
  sound(g, "identities kmeans")
  g = assert(ge.load(C .. "/onnx__tensorflow-onnx/tests/models/ae0/frozen.pb"))
  is(9, ntype(g, "Identity"), "identities: ae0 has 9 Identity ops")
  is(8, run(IDS, g).removed, "identities: ae0: 8 removed, the output stays")
  is(1, ntype(g, "Identity"), "identities: ... one left")
  sound(g, "identities ae0")
end

tap.done()
