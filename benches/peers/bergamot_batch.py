#!/usr/bin/env python3
"""Native Bergamot (PyPI bergamot==0.4.5, Firefox's engine) on a model folder, all lines in one
call, N workers, timed: prints lines/s as JSON. Python <= 3.10 (the wheel's limit).

usage: python bergamot_batch.py MODEL_DIR INPUT WORKERS [OUTPUT]
The wheel's `import bergamot` downloads a model list, so the compiled extension is loaded
directly (see ../shared/docs/peers.md). Config: what Firefox passes, `ssplit-mode: sentence`.
"""
import glob, importlib.util, json, os, sys, sysconfig, time

so = glob.glob(os.path.join(sysconfig.get_paths()["purelib"], "bergamot", "_bergamot*.so"))[0]
spec = importlib.util.spec_from_file_location("_bergamot", so)
b = importlib.util.module_from_spec(spec)
spec.loader.exec_module(b)
d, inp, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
one = lambda pat: (sorted(glob.glob(os.path.join(d, pat))) or [None])[0]
shared = one("vocab.*.spm")
cfg = f"""models:
  - {one("model.*.intgemm.alphas.bin")}
vocabs:
  - {shared or one("srcvocab.*.spm")}
  - {shared or one("trgvocab.*.spm")}
beam-size: 1
normalize: 1.0
word-penalty: 0
max-length-break: 128
mini-batch-words: 1024
workspace: 128
max-length-factor: 2.0
skip-cost: true
cpu-threads: 0
quiet: true
quiet-translation: true
gemm-precision: int8shiftAlphaAll
alignment: soft
ssplit-mode: sentence
"""
lines = open(inp, encoding="utf-8").read().splitlines()
svc = b.Service(b.ServiceConfig(numWorkers=workers, cacheSize=0, logLevel="off"))
model = svc.modelFromConfig(cfg)
opts = b.ResponseOptions(qualityScores=False, alignment=False, HTML=False, sentenceMappings=False)
t0 = time.time()
out = [r.target.text for r in svc.translate(model, b.VectorString(lines), opts)]
dt = time.time() - t0
if len(sys.argv) > 4:
    open(sys.argv[4], "w", encoding="utf-8").write("\n".join(out) + "\n")
print(json.dumps({"engine": "bergamot-native", "workers": workers, "lines": len(lines), "seconds": dt,
                  "lines_per_s": len(lines) / dt}))
