-- remove_device: clear every op's device (transform_graph's
-- remove_device), so TensorFlow places them itself.
return {
  name = "remove_device",
  description = [[
Clear the device of every op.

Clears the device of every op, so that TensorFlow's placer chooses.]],
  params = {},
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g)
    for _, op in ipairs(g:ops()) do
      if op.device ~= "" then op.device = "" end
    end
  end,
}
