#!/usr/bin/env python3
"""fxtranslate's PyPI wheel (fxtranslate==0.5.0, one thread) for benches/peers/run: one line per
translate() call, each call timed. Prints one JSON object.

  fxtranslate_py.py MODEL_DIR INPUT OUTPUT

Its Translator takes the files' bytes (its CLI needs the network even for cached models).
"""
import glob
import json
import os
import sys
import time

T_START = time.time()


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    d, inp, outp = sys.argv[1:]
    import fxtranslate

    def one(pattern):
        return (sorted(glob.glob(os.path.join(d, pattern))) or [None])[0]

    model, shared = one("model.*.intgemm.alphas.bin"), one("vocab.*.spm")
    src, trg = shared or one("srcvocab.*.spm"), shared or one("trgvocab.*.spm")
    if not (model and src and trg):
        sys.exit(f"fxtranslate_py.py: {d} lacks model.*.intgemm.alphas.bin or its vocabularies")
    read = lambda p: open(p, "rb").read()
    t0 = time.time()
    tr = fxtranslate.Translator(model=read(model), src_vocab=read(src), trg_vocab=read(trg))
    load_s = time.time() - t0
    start_s = time.time() - T_START
    lines = open(inp, encoding="utf-8").read().splitlines()
    out, lat = [], []
    t0 = time.time()
    for line in lines:
        t = time.time()
        out.append(tr.translate(line))
        lat.append((time.time() - t) * 1e3)
    seconds = time.time() - t0
    with open(outp, "w", encoding="utf-8") as f:
        f.write("".join(o + "\n" for o in out))
    lat.sort()
    pct = lambda q: lat[max(1, min(len(lat), -int(-q * len(lat) // 1))) - 1] if lat else None
    print(json.dumps({"engine": "fxtranslate-py", "lines": len(lines), "seconds": seconds,
                      "load_s": load_s, "start_s": start_s, "p50_ms": pct(0.50),
                      "p99_ms": pct(0.99), "backend": tr.backend()}))


if __name__ == "__main__":
    main()
