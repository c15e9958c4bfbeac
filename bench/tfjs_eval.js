// tfjs_eval.js: times TensorFlow.js's CPU backend on a graph model, for
// bench/eval.sh to set beside `gerewrite eval` on the same model and input.
//
//   node tfjs_eval.js MODEL.json INPUT_SHAPE REPEAT
//
// INPUT_SHAPE is "1,224,224,3"; the input is uniform from a fixed seed, in
// [0, 1) for a float32 input and in [0, 256) for an integer one.  Prints one line: "best_s median_s peak_rss_bytes".
'use strict';
const fs = require('fs');
const path = require('path');
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-cpu');
const tfconv = require('@tensorflow/tfjs-converter');

function loadHandler(file) {
	const json = JSON.parse(fs.readFileSync(file, 'utf8'));
	const dir = path.dirname(file);
	const specs = [];
	const parts = [];
	for (const group of json.weightsManifest || []) {
		for (const w of group.weights)
			specs.push(w);
		for (const p of group.paths)
			parts.push(fs.readFileSync(path.join(dir, p)));
	}
	const all = Buffer.concat(parts);
	const data = all.buffer.slice(all.byteOffset, all.byteOffset + all.length);
	return tf.io.fromMemory({
		modelTopology: json.modelTopology,
		weightSpecs: specs,
		weightData: data,
		format: json.format,
		generatedBy: json.generatedBy,
		convertedBy: json.convertedBy,
		signature: json.signature,
		userDefinedMetadata: json.userDefinedMetadata,
	});
}

async function main() {
	const [file, shapeArg, repeatArg] = process.argv.slice(2);
	const shape = shapeArg.split(',').map(Number);
	const repeat = Number(repeatArg || 5);
	await tf.setBackend('cpu');
	const model = await tfconv.loadGraphModel(loadHandler(file));
	const dtype = model.inputs[0].dtype || 'float32';
	const x = dtype === 'float32'
		? tf.randomUniform(shape, 0, 1, 'float32', 1)
		: tf.randomUniform(shape, 0, 256, 'int32', 1);
	let peak = process.memoryUsage().rss;
	const times = [];
	for (let i = 0; i <= repeat; i++) {
		const t0 = process.hrtime.bigint();
		const y = await model.executeAsync(x);
		const ys = Array.isArray(y) ? y : [y];
		for (const t of ys)
			await t.data();
		const t1 = process.hrtime.bigint();
		tf.dispose(ys);
		peak = Math.max(peak, process.memoryUsage().rss);
		if (i > 0) // the first run compiles and warms up
			times.push(Number(t1 - t0) / 1e9);
	}
	times.sort((a, b) => a - b);
	const med = times[Math.floor(times.length / 2)];
	console.log(`${times[0].toFixed(4)} ${med.toFixed(4)} ${peak}`);
}

main().catch((e) => { console.error(`tfjs_eval: ${e.message}`); process.exit(2); });
