#!/usr/bin/env python3
"""Native Bergamot (PyPI bergamot==0.4.5, Firefox's engine) for benches/peers/run. Python <= 3.10
(the wheel's limit). Prints one JSON object.

  bergamot.py batch MODEL_DIR INPUT WORKERS OUTPUT   all lines in one call
  bergamot.py post MODEL_DIR INPUT WORKERS OUTPUT    one line per call, each call timed (idle engine)
  bergamot.py clients MODELS_DIR CORPUS WORKERS CLIENTS
      one Service holding every `<from>-<to>/` model of MODELS_DIR; CLIENTS threads each send one
      post (`from<TAB>to<TAB>text` lines of CORPUS, in order, so directions interleave) and wait
      for it. The binding holds the GIL through part of each translate() call, so fewer posts
      are in flight than there are clients: `in_flight` says how many on average.
  bergamot.py grouped MODELS_DIR CORPUS WORKERS
      the same Service and posts, each model's posts in one call (models in turn): Bergamot's
      best batching over many models, an upper bound on its throughput without latencies.

The kernel is intgemm's choice for the CPU unless INTGEMM_CPUID says otherwise (AVX2 and
AVX512BW saturate, AVX512VNNI is exact). The wheel's `import bergamot` downloads a model list, so
the compiled extension is loaded directly (see ../shared/docs/peers.md). Config: what Firefox
passes, with `ssplit-mode: sentence` so that each line is one sentence.
"""
import glob
import importlib.util
import json
import os
import sys
import sysconfig
import threading
import time

T_START = time.time()


def load_extension():
    found = glob.glob(os.path.join(sysconfig.get_paths()["purelib"], "bergamot", "_bergamot*.so"))
    if not found:
        sys.exit("bergamot.py: no bergamot/_bergamot*.so in this Python (pip install bergamot==0.4.5)")
    spec = importlib.util.spec_from_file_location("_bergamot", found[0])
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    return ext


def config(d):
    def one(pattern):
        return (sorted(glob.glob(os.path.join(d, pattern))) or [None])[0]

    model = one("model.*.intgemm.alphas.bin")
    shared = one("vocab.*.spm")
    src, trg = shared or one("srcvocab.*.spm"), shared or one("trgvocab.*.spm")
    if not (model and src and trg):
        sys.exit(f"bergamot.py: {d} lacks model.*.intgemm.alphas.bin or its vocabularies")
    return f"""models:
  - {model}
vocabs:
  - {src}
  - {trg}
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


def percentile(sorted_ms, q):
    if not sorted_ms:
        return None
    rank = max(1, min(len(sorted_ms), -int(-q * len(sorted_ms) // 1)))
    return sorted_ms[rank - 1]


def main():
    if len(sys.argv) < 5 or sys.argv[1] not in ("batch", "post", "clients", "grouped"):
        sys.exit(__doc__)
    mode, path, inp, workers = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    b = load_extension()
    opts = b.ResponseOptions(qualityScores=False, alignment=False, HTML=False, sentenceMappings=False)
    svc = b.Service(b.ServiceConfig(numWorkers=workers, cacheSize=0, logLevel="off"))
    result = {"engine": "bergamot-native", "mode": mode, "workers": workers,
              "kernel": os.environ.get("INTGEMM_CPUID", "default")}
    lat = []
    if mode in ("batch", "post"):
        t0 = time.time()
        model = svc.modelFromConfig(config(path))
        result["load_s"] = time.time() - t0
        result["start_s"] = time.time() - T_START
        lines = open(inp, encoding="utf-8").read().splitlines()
        t0 = time.time()
        if mode == "batch":
            out = [r.target.text for r in svc.translate(model, b.VectorString(lines), opts)]
        else:
            out = []
            for line in lines:
                t = time.time()
                out.append(svc.translate(model, b.VectorString([line]), opts)[0].target.text)
                lat.append((time.time() - t) * 1e3)
        result["seconds"] = time.time() - t0
        result["lines"] = len(lines)
        with open(sys.argv[5], "w", encoding="utf-8") as f:
            f.write("".join(o + "\n" for o in out))
    else:
        t0 = time.time()
        models = {}
        for name in sorted(os.listdir(path)):
            if os.path.isdir(os.path.join(path, name)) and "-" in name:
                models[tuple(name.split("-", 1))] = svc.modelFromConfig(config(os.path.join(path, name)))
        result["load_s"] = time.time() - t0
        result["models"] = len(models)
        posts = []
        for n, line in enumerate(open(inp, encoding="utf-8").read().splitlines(), 1):
            fields = line.split("\t", 2)
            if len(fields) != 3 or (fields[0], fields[1]) not in models:
                sys.exit(f"bergamot.py: {inp}:{n}: not `from<TAB>to<TAB>text` of a model in {path}")
            posts.append((models[(fields[0], fields[1])], fields[2].replace("\\n", "\n")))
        result["lines"] = len(posts)
        if mode == "grouped":
            groups = {}
            for m, text in posts:
                groups.setdefault(id(m), (m, []))[1].append(text)
            t0 = time.time()
            for m, texts in groups.values():
                svc.translate(m, b.VectorString(texts), opts)
            result["seconds"] = time.time() - t0
            result["lines_per_s"] = result["lines"] / result["seconds"]
            print(json.dumps(result))
            return
        clients = int(sys.argv[5])
        next_post = iter(range(len(posts)))
        lock = threading.Lock()
        errors = []

        def client():
            mine = []
            try:
                while True:
                    with lock:
                        i = next(next_post, None)
                    if i is None:
                        break
                    t = time.time()
                    svc.translate(posts[i][0], b.VectorString([posts[i][1]]), opts)
                    mine.append((time.time() - t) * 1e3)
            except Exception as e:  # reported below: a failed client must not pass for a fast one
                errors.append(repr(e))
            with lock:
                lat.extend(mine)

        t0 = time.time()
        pool = [threading.Thread(target=client) for _ in range(clients)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        result["seconds"] = time.time() - t0
        if errors:
            sys.exit(f"bergamot.py: {len(errors)} clients failed: {errors[0]}")
        result["clients"] = clients
    if mode == "clients":
        # Posts in flight on average (sum of latencies / wall time): about CLIENTS when every client
        # spends its time waiting on the Service, far less when they queue on the GIL instead.
        result["in_flight"] = sum(lat) / 1e3 / result["seconds"]
    lat.sort()
    result["p50_ms"], result["p99_ms"] = percentile(lat, 0.50), percentile(lat, 0.99)
    result["lines_per_s"] = result["lines"] / result["seconds"]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
