// TFLite's own interpreter (npm @tensorflow/tfjs-tflite: TFLite compiled to wasm, XNNPACK
// kernels) on the same seeded int8 input as the runner's interpreter (mculab_tfl_seed_input:
// xorshift32, the top byte of each step), in headless Chromium driven by Playwright.
//   node tools/tflite_reference/run.mjs [--seed N] MODEL.tflite[@TENSOR]...
//   node tools/tflite_reference/run.mjs --jobs JOBS.json
// JOBS.json: {"jobs": [{"model": PATH, "op": I, "inputs": [[int8...], ...]}]}: operator I of the
// model alone (the subgraph patched in a copy to run only that operator, its activation inputs
// the graph's inputs, its output the graph's output) on the given inputs; prints one JSON line
// per job: {"op", "output_shape", "output"}. This compares one layer at a time, each on the
// same input on both sides, so a difference cannot come from an earlier layer.
// MODEL@TENSOR makes tensor TENSOR (an index into the first subgraph's tensors) the graph's
// output, so an intermediate layer can be compared: the subgraph's outputs vector is patched in
// a copy of the model. Prints one JSON line per model: {"model", "tensor", "input_shape",
// "output_shape", "output": [...]}. $MCULAB_CHROMIUM overrides /usr/bin/chromium. Offline: the
// page loads the libraries and the wasm from node_modules.
import { createServer } from 'node:http';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');

let seed = 1;
let models = [];
let jobs = null;
for (let i = 2; i < process.argv.length; ++i) {
  if (process.argv[i] === '--seed') seed = Number(process.argv[++i]);
  else if (process.argv[i] === '--jobs') jobs = JSON.parse(readFileSync(process.argv[++i])).jobs;
  else models.push(process.argv[i]);
}
if (jobs !== null) models = jobs.map((j) => j.model);
if (models.length === 0) {
  console.error('usage: node run.mjs [--seed N] MODEL.tflite...');
  process.exit(2);
}

// The model's bytes with subgraph 0's outputs[0] set to `tensor` (schema.fbs: Model.subgraphs is
// field 2, SubGraph.outputs field 2).
function withOutput(bytes, tensor) {
  const b = Buffer.from(bytes);
  const u32 = (at) => b.readUInt32LE(at);
  const field = (table, id) => {
    const vt = table - b.readInt32LE(table);
    const off = b.readUInt16LE(vt + 4 + 2 * id);
    if (off === 0) throw new Error(`field ${id} absent`);
    return table + off;
  };
  const deref = (at) => at + u32(at);
  const root = u32(0);
  const subgraphs = deref(field(root, 2));
  const subgraph = deref(subgraphs + 4);
  const outputs = deref(field(subgraph, 2));
  if (u32(outputs) < 1) throw new Error('no outputs');
  b.writeInt32LE(tensor, outputs + 4);
  return b;
}

// The model's bytes running operator `op` alone: subgraph 0's operators vector holds only that
// operator; the graph's inputs are the operator's inputs that are neither constants nor variables
// (its first input when that is the only one; else the operator's own inputs vector, which must
// then hold activations only, as ADD's does) and its output the graph's output.
function withOneOperator(bytes, op) {
  const b = Buffer.from(bytes);
  const u32 = (at) => b.readUInt32LE(at);
  const field = (table, id) => {
    const vt = table - b.readInt32LE(table);
    if (4 + 2 * id >= b.readUInt16LE(vt)) throw new Error(`field ${id} absent`);
    const off = b.readUInt16LE(vt + 4 + 2 * id);
    if (off === 0) throw new Error(`field ${id} absent`);
    return table + off;
  };
  const deref = (at) => at + u32(at);
  const root = u32(0);
  const subgraph = deref(deref(field(root, 2)) + 4);
  const tensors = deref(field(subgraph, 0));
  const buffers = deref(field(root, 4));
  const isConst = (t) => {
    const tensor = deref(tensors + 4 + 4 * t);
    let buffer = 0;
    try { buffer = u32(field(tensor, 2)); } catch (e) { buffer = 0; }
    if (buffer === 0) return false;
    const table = deref(buffers + 4 + 4 * buffer);
    try { return u32(deref(field(table, 0))) > 0; } catch (e) { return false; }
  };
  // A variable tensor (an LSTM's hidden and cell state) is the operator's own state, not an input.
  const isVariable = (t) => {
    const tensor = deref(tensors + 4 + 4 * t);
    try { return b.readUInt8(field(tensor, 5)) !== 0; } catch (e) { return false; }
  };
  const operators = deref(field(subgraph, 3));
  const opTable = deref(operators + 4 + 4 * op);
  const opInputsField = field(opTable, 1);
  const opInputs = deref(opInputsField);
  const opOutputs = deref(field(opTable, 2));
  const ins = [];
  for (let k = 0; k < u32(opInputs); ++k) ins.push(b.readInt32LE(opInputs + 4 + 4 * k));
  const activations = ins.filter((t) => t >= 0 && !isConst(t) && !isVariable(t));
  // The operators vector: one element, pointing at the operator's table.
  b.writeUInt32LE(1, operators);
  b.writeUInt32LE(opTable - (operators + 4), operators + 4);
  const inputsField = field(subgraph, 1);
  if (activations.length === 1) {
    b.writeInt32LE(activations[0], deref(inputsField) + 4);
  } else if (activations.length === ins.length && opInputs > inputsField) {
    b.writeUInt32LE(opInputs - inputsField, inputsField);
  } else {
    throw new Error(`operator ${op}: cannot make its inputs the graph's`);
  }
  b.writeInt32LE(b.readInt32LE(opOutputs + 4), deref(field(subgraph, 2)) + 4);
  return b;
}

const bodies = jobs !== null ? jobs.map((j) => withOneOperator(readFileSync(j.model), j.op))
                             : models.map((spec) => {
  const at = spec.lastIndexOf('@');
  if (at < 0) return readFileSync(spec);
  return withOutput(readFileSync(spec.slice(0, at)), Number(spec.slice(at + 1)));
});

const modules = join(here, 'node_modules');
const page_html = `<!doctype html><html><head>
<script src="/lib/@tensorflow/tfjs-core/dist/tf-core.min.js"></script>
<script src="/lib/@tensorflow/tfjs-backend-cpu/dist/tf-backend-cpu.min.js"></script>
<script src="/lib/@tensorflow/tfjs-tflite/dist/tf-tflite.min.js"></script>
</head><body>tflite reference</body></html>`;
const types = { '.js': 'text/javascript', '.wasm': 'application/wasm' };
const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  try {
    if (url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(page_html);
    } else if (url.pathname.startsWith('/model/')) {
      const body = bodies[Number(url.pathname.slice(7))];
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(body);
    } else if (url.pathname.startsWith('/lib/')) {
      const path = normalize(join(modules, url.pathname.slice(5)));
      if (!path.startsWith(modules)) throw new Error('outside node_modules');
      const body = readFileSync(path);
      const ext = path.slice(path.lastIndexOf('.'));
      res.writeHead(200, { 'content-type': types[ext] || 'application/octet-stream' });
      res.end(body);
    } else {
      res.writeHead(404);
      res.end();
    }
  } catch (e) {
    if (process.env.MCULAB_TFLITE_REFERENCE_DEBUG) console.error(`${url.pathname}: ${e}`);
    res.writeHead(404);
    res.end(String(e));
  }
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const base = `http://127.0.0.1:${server.address().port}`;

const profile = mkdtempSync(join(tmpdir(), 'mculab-tflite-reference-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.MCULAB_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox'],
});
let status = 0;
try {
  const page = await context.newPage();
  // TFLite's own messages (why a model does not initialize) reach the browser console.
  if (process.env.MCULAB_TFLITE_REFERENCE_DEBUG) page.on('console', (m) => console.error(m.text()));
  await page.goto(base + '/');
  for (let i = 0; jobs !== null && i < jobs.length; ++i) {
    const r = await page.evaluate(async ({ index, inputs }) => {
      tflite.setWasmPath('/lib/@tensorflow/tfjs-tflite/wasm/');
      const buf = await (await fetch('/model/' + index)).arrayBuffer();
      const model = await tflite.loadTFLiteModel(buf, { numThreads: 1 });
      const feed = model.inputs.map((x, k) => (x.dtype === 'float32'
        ? tf.tensor(Float32Array.from(inputs[k]), x.shape, 'float32')
        : tf.tensor(Int32Array.from(inputs[k]), x.shape, 'int32')));
      const out = model.predict(feed.length === 1 ? feed[0] : feed);
      const t = Array.isArray(out) ? out[0] : out.dtype ? out : Object.values(out)[0];
      return { output_shape: t.shape, output: Array.from(await t.data()) };
    }, { index: i, inputs: jobs[i].inputs });
    console.log(JSON.stringify({ op: jobs[i].op, ...r }));
  }
  for (let i = 0; jobs === null && i < models.length; ++i) {
    const r = await page.evaluate(async ({ index, seed }) => {
      tflite.setWasmPath('/lib/@tensorflow/tfjs-tflite/wasm/');
      const buf = await (await fetch('/model/' + index)).arrayBuffer();
      const model = await tflite.loadTFLiteModel(buf, { numThreads: 1 });
      const shape = model.inputs[0].shape;
      const n = shape.reduce((a, b) => a * b, 1);
      let x = seed >>> 0 || 0x6d2b79f5;
      const data = new Int32Array(n);
      for (let k = 0; k < n; ++k) {
        x = (x ^ (x << 13)) >>> 0;
        x = (x ^ (x >>> 17)) >>> 0;
        x = (x ^ (x << 5)) >>> 0;
        const b = x >>> 24;
        data[k] = b > 127 ? b - 256 : b;
      }
      const out = model.predict(tf.tensor(data, shape, 'int32'));
      const t = Array.isArray(out) ? out[0] : out.dtype ? out : Object.values(out)[0];
      return { input_shape: shape, input_dtype: model.inputs[0].dtype,
               output_shape: t.shape, output_dtype: t.dtype, output: Array.from(await t.data()) };
    }, { index: i, seed });
    console.log(JSON.stringify({ model: models[i], ...r }));
  }
} catch (e) {
  console.error('tflite reference: ' + e);
  status = 1;
} finally {
  await context.close();
  server.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(status);
