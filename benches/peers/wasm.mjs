// Firefox's WASM Bergamot (npm @browsermt/bergamot-translator 0.4.9) under Node.js for
// benches/peers/run. Prints one JSON object.
//
//   node wasm.mjs PACKAGE_DIR MODEL_DIR INPUT WORKERS BATCH OUTPUT LATENCY
//
// Throughput: every line submitted at once to a BatchTranslator (WORKERS workers, BATCH posts per
// worker call, as its API batches). Then, when LATENCY > 0, the first LATENCY lines one at a time
// (each awaited before the next) on the idle translator. Local model files through a
// TranslatorBacking (the package's own downloads a registry). The package is imported by path:
// ESM ignores NODE_PATH.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

const tStart = performance.now();
const [pkg, modelDir, input, workersArg, batchArg, output, latencyArg] = process.argv.slice(2);
if (latencyArg === undefined) {
  console.error('usage: node wasm.mjs PACKAGE_DIR MODEL_DIR INPUT WORKERS BATCH OUTPUT LATENCY');
  process.exit(2);
}
const { BatchTranslator, TranslatorBacking } = await import(pathToFileURL(join(pkg, 'translator.js')).href);

// The package's worker is CommonJS inside a "type": "module" package: run the .cjs copy that
// benches/peers/run made beside it.
const NodeWorker = globalThis.Worker;
globalThis.Worker = class extends NodeWorker {
  constructor(url) {
    super(new URL(String(url).replace(/translator-worker\.js$/, 'translator-worker.cjs')));
  }
};

const files = readdirSync(modelDir);
const one = (re) => files.filter((f) => re.test(f)).sort()[0];
const model = one(/^model\..*\.intgemm\.alphas\.bin$/);
const shared = one(/^vocab\..*\.spm$/);
const src = shared || one(/^srcvocab\..*\.spm$/);
const trg = shared || one(/^trgvocab\..*\.spm$/);
if (!model || !src || !trg) {
  console.error(`wasm.mjs: ${modelDir} lacks model.*.intgemm.alphas.bin or its vocabularies`);
  process.exit(1);
}
const buffer = (f) => {
  const b = readFileSync(join(modelDir, f));
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
};

class LocalBacking extends TranslatorBacking {
  async loadModelRegistery() {
    return [{ from: 'xx', to: 'yy', files: {} }];
  }
  async loadTranslationModel() {
    return {
      model: buffer(model),
      // No shortlist (an empty one), as the other engines here run without.
      shortlist: new ArrayBuffer(0),
      vocabs: shared ? [buffer(src)] : [buffer(src), buffer(trg)],
      qualityModel: null,
      // One line is one sentence, as `ssplit-mode: sentence` for native Bergamot.
      config: { 'ssplit-mode': 'sentence' },
    };
  }
}

const workers = Number(workersArg);
const batchSize = Number(batchArg);
const latencyPosts = Number(latencyArg);
const options = { workers, batchSize, cacheSize: 0, pivotLanguage: null };
const translator = new BatchTranslator(options, new LocalBacking(options));
const request = (text) => translator.translate({ from: 'xx', to: 'yy', text, html: false, qualityScores: false });

const lines = readFileSync(input, 'utf-8').split('\n');
if (lines.length && lines[lines.length - 1] === '') lines.pop();

// Load: each worker starts, compiles the wasm and loads the model on its first batch, so one full
// batch per worker warms them all before timing.
let t0 = performance.now();
await Promise.all(Array.from({ length: workers * batchSize }, () => request('Hola.')));
const loadS = (performance.now() - t0) / 1e3;
const startS = (performance.now() - tStart) / 1e3;

t0 = performance.now();
const out = (await Promise.all(lines.map(request))).map((r) => r.target.text);
const seconds = (performance.now() - t0) / 1e3;
writeFileSync(output, out.map((o) => o + '\n').join(''));

const lat = [];
for (const line of lines.slice(0, latencyPosts)) {
  const t = performance.now();
  await request(line);
  lat.push(performance.now() - t);
}
lat.sort((a, b) => a - b);
const pct = (q) => (lat.length ? lat[Math.max(1, Math.min(lat.length, Math.ceil(q * lat.length))) - 1] : null);
console.log(JSON.stringify({
  engine: 'bergamot-wasm', lines: lines.length, seconds, load_s: loadS, start_s: startS, workers,
  batch: batchSize, latency_posts: lat.length, p50_ms: pct(0.5), p99_ms: pct(0.99),
}));
await translator.delete();
process.exit(0);
