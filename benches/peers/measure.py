#!/usr/bin/env python3
"""The measuring half of benches/peers/run (which installs the peers and then calls this): runs
each engine on the same corpus, model and cores, in rounds (each round runs every engine once, so
that a shared machine's slow minutes fall on all of them), takes each engine's median, and writes the
table (stdout and Markdown) and the whole result (JSON) under $PEERS_DIR/results/.

Environment (set by run): PEERS_ROOT (the repository), PEERS_HERE (benches/peers), PEERS_DIR
(the peers' install folder), RESEAM_BIN; optional PEERS_CLIENTS (64), WASM_BATCH (8),
PEERS_LATENCY (300 posts in the idle-latency phases), PEERS_PAIR (`from-to`, when the model's
file name does not say it).
"""
import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.environ["PEERS_ROOT"]
HERE = os.environ["PEERS_HERE"]
PEERS = os.environ["PEERS_DIR"]
RESEAM = os.path.abspath(os.environ["RESEAM_BIN"])
CLIENTS = int(os.environ.get("PEERS_CLIENTS", "64"))
WASM_BATCH = int(os.environ.get("WASM_BATCH", "8"))
LANGS = "es ca de fr it pt nl pl cs sk sl hr ro hu fi et lv lt bg uk ru el tr sv da".split()


class Failed(Exception):
    pass


def log(msg):
    print(f"peers: {msg}", file=sys.stderr, flush=True)


def first(d, pattern):
    return (sorted(glob.glob(os.path.join(d, pattern))) or [None])[0]


def cpu_name():
    for line in open("/proc/cpuinfo", encoding="utf-8"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def reseam_isa():
    """The kernel in use and what `auto` means here, from `reseam --version --verbose`."""
    text = subprocess.run([RESEAM, "--version", "--verbose"], capture_output=True, text=True, env=env_with()).stdout
    kernel = re.search(r"kernel in use: (\S+)", text)
    auto = re.search(r"arithmetic auto \(Firefox on this CPU\): (\S+)", text)
    return (kernel.group(1) if kernel else "unknown"), (auto.group(1) if auto else None)


def cpu_flags():
    for line in open("/proc/cpuinfo", encoding="utf-8"):
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


class Runner:
    def __init__(self, threads):
        self.cores = None
        n = os.cpu_count() or 1
        # Every engine on the same cores: 0..N-1 (all of them when N is the machine's count).
        if shutil.which("taskset") and threads <= n:
            self.cores = f"0-{threads - 1}"

    def run(self, cmd, env=None, stdin=None, stdout=None, cwd=None):
        """Runs cmd pinned to the cores; returns (wall seconds, peak RSS MiB, stdout text)."""
        with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
            full = ["/usr/bin/time", "-f", "%M", "-o", tf.name] + cmd
            if self.cores:
                full = ["taskset", "-c", self.cores] + full
            fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
            fout = open(stdout, "wb") if stdout else subprocess.PIPE
            try:
                t0 = time.perf_counter()
                p = subprocess.run(full, stdin=fin, stdout=fout, stderr=subprocess.PIPE, env=env, cwd=cwd)
                wall = time.perf_counter() - t0
            finally:
                if stdin:
                    fin.close()
                if stdout:
                    fout.close()
            err = p.stderr.decode("utf-8", "replace")
            if p.returncode != 0:
                tail = "\n".join(err.strip().splitlines()[-6:])
                raise Failed(f"{' '.join(cmd[:3])} ... exited with {p.returncode}: {tail}")
            lines = [l for l in tf.read().splitlines() if l.strip()]
            rss = int(lines[-1]) / 1024 if lines and lines[-1].strip().isdigit() else None
            out = "" if stdout else p.stdout.decode("utf-8", "replace")
            return wall, rss, out


def helper_json(text):
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise Failed(f"no JSON in the helper's output: {text[-300:]!r}")


# The one reseam setting a run may take from the caller: the kernel (`RESEAM_MT_ISA=avx2` measures
# the AVX2 row on an AVX-512 machine). Every other RESEAM_ variable (profile, debug, arithmetic,
# threads...) is dropped so a stray one cannot change what the flags ask for. Until 2026-12-06 this
# dropped RESEAM_MT_ISA too, so the "AVX2 forced" runs before then ran reseam's default kernels.
KEEP = ("RESEAM_MT_ISA",)


def env_with(**kw):
    env = {k: v for k, v in os.environ.items()
           if k not in ("INTGEMM_CPUID", "THREADS") and (k in KEEP or not k.startswith("RESEAM_"))}
    env.update({k: v for k, v in kw.items() if v is not None})
    return env


def read_lines(path):
    return open(path, encoding="utf-8").read().splitlines()


def agreement(out, ref):
    if out is None or ref is None:
        return None
    a, b = read_lines(out), read_lines(ref)
    return {"equal": sum(x == y for x, y in zip(a, b)), "of": max(len(a), len(b))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--corpus", default="")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--quick", default="0")
    ap.add_argument("--only", required=True)
    ap.add_argument("--directions", type=int, default=1)
    a = ap.parse_args()
    quick = a.quick not in ("0", "", "false")
    runs = 1 if quick else a.runs
    only = set(a.only.split(","))
    n = a.threads
    model_src = os.path.abspath(a.model)

    int8 = first(model_src, "model.*.intgemm.alphas.bin")
    if not int8:
        sys.exit(f"peers: no model.*.intgemm.alphas.bin in {model_src}")
    pair = os.environ.get("PEERS_PAIR")
    if not pair:
        code = os.path.basename(int8).split(".")[1]
        if len(code) != 4:
            sys.exit(f"peers: cannot tell the pair from {os.path.basename(int8)}: set PEERS_PAIR=from-to")
        pair = f"{code[:2]}-{code[2:]}"
    src_lang, trg_lang = pair.split("-", 1)

    # The corpus: the model's held-out set ten times by default (once with --quick).
    if a.corpus:
        lines = read_lines(a.corpus)
        corpus_name = a.corpus
        if quick:
            lines = lines[:300]
    else:
        heldout = os.path.join(model_src, "refs", "heldout." + src_lang)
        if not os.path.isfile(heldout):
            sys.exit(f"peers: no {heldout}: give --corpus FILE")
        lines = read_lines(heldout) * (1 if quick else 10)
        corpus_name = f"{os.path.relpath(heldout, ROOT)} x{1 if quick else 10}"
    lines = [l.replace("\t", " ").replace("\r", " ") for l in lines]
    if not lines:
        sys.exit("peers: the corpus is empty")
    words = sum(len(l.split()) for l in lines)
    latency_posts = min(len(lines), int(os.environ.get("PEERS_LATENCY", "100" if quick else "300")))

    work = tempfile.mkdtemp(prefix="peers-")
    try:
        result = measure(a, quick, runs, only, n, model_src, pair, src_lang, trg_lang, lines, words,
                         corpus_name, latency_posts, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    failed = [r for r in result["rows"] if r.get("error")]
    sys.exit(1 if failed else 0)


def measure(a, quick, runs, only, n, model_src, pair, src_lang, trg_lang, lines, words, corpus_name,
            latency_posts, work):
    runner = Runner(n)
    corpus = os.path.join(work, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        f.write("".join(l + "\n" for l in lines))
    one_line = os.path.join(work, "one.txt")
    with open(one_line, "w", encoding="utf-8") as f:
        f.write(lines[0] + "\n")
    # translate writes model.reseam into its model folder: a copy, never the source folder.
    models = os.path.join(work, "models")
    model = os.path.join(models, pair)
    os.makedirs(model)
    for f in os.listdir(model_src):
        p = os.path.join(model_src, f)
        if os.path.isfile(p) and not f.endswith(".reseam"):
            shutil.copy(p, model)
    isa, auto = reseam_isa() if os.path.exists(RESEAM) else ("unknown", None)
    flags = cpu_flags()
    kernels = bergamot_kernels(flags)
    bergamot_default = kernels[0][1]
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "cpu": cpu_name(), "cpus": os.cpu_count(),
        "reseam_isa": isa, "reseam_isa_forced": os.environ.get("RESEAM_MT_ISA") or None, "reseam_auto_arithmetic": auto, "bergamot_default_arithmetic": bergamot_default,
        "threads": n, "runs": runs, "quick": quick, "model": os.path.relpath(model_src, ROOT), "pair": pair,
        "corpus": corpus_name, "lines": len(lines), "source_words": words, "latency_posts": latency_posts,
        "clients": CLIENTS, "cores": runner.cores, "directions": a.directions,
        "load_before": os.getloadavg(), "reseam": RESEAM,
        "reseam_commit": subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True).stdout.strip(),
    }
    log(f"{len(lines)} lines ({words} words), {n} threads, {runs} run(s), cores {runner.cores}, "
        f"load {meta['load_before'][0]:.2f}")
    rows = []
    if a.directions > 1:
        directions(a, runner, runs, only, n, model_src, trg_lang, lines, words, latency_posts, work, rows, kernels)
    else:
        single(runner, runs, only, n, model, models, src_lang, trg_lang, lines, words, corpus, one_line,
               latency_posts, work, rows, kernels, auto)
    meta["load_after"] = os.getloadavg()
    result = {"meta": meta, "rows": rows}
    write_results(result)
    return result


def bergamot_kernels(flags):
    """intgemm's kernels to run Bergamot with, each with its arithmetic: its default (VNNI, exact,
    where AVX-512 VNNI exists, else a saturating one), and AVX2 forced where the default is another
    kernel (on a CPU without AVX-512BW the default is AVX2 already, and a second run of the same
    kernel would only double the time)."""
    default = [("default", "exact" if "avx512_vnni" in flags else "saturating")]
    return default + ([("AVX2", "saturating")] if "avx512bw" in flags else [])


class Plan:
    """The rows to measure, run in rounds: round i runs every row once, in the order they were
    added, so that a shared machine's slow minutes fall on every engine alike instead of on
    whichever ran then (one engine's runs back to back, then the next's, made a reseam/Bergamot
    ratio swing 1.13x-1.42x on one Zen 3 within half an hour). Each row keeps its median run."""

    def __init__(self, rows):
        self.rows = rows
        self.items = []

    def add(self, row, fn, startup=None, then=None):
        """fn(i) -> record with "seconds"; startup() -> seconds, taken after the rounds; then(row)
        once the row has its median (not called for a failed row)."""
        self.rows.append(row)
        self.items.append((row, fn, startup, then, []))

    def run(self, runs):
        for i in range(runs):
            for row, fn, _, _, records in self.items:
                if row.get("error"):
                    continue
                log(f"{row['label']} (round {i + 1}/{runs})")
                try:
                    rec = fn(i)
                except (Failed, OSError, ValueError) as e:
                    row["error"] = str(e)
                    log(f"{row['label']}: FAILED: {e}")
                    continue
                rec["load_at_start"] = os.getloadavg()[0]
                records.append(rec)
        for row, _, startup, then, records in self.items:
            if row.get("error"):
                continue
            med = dict(sorted(records, key=lambda r: r["seconds"])[(len(records) - 1) // 2])
            # In round order, so that one round's figures of two rows can be set side by side.
            med["all_seconds"] = [r["seconds"] for r in records]
            row.update(med)
            try:
                if startup:
                    row["startup_s"] = min(startup() for _ in range(2))
            except (Failed, OSError, ValueError) as e:
                row["error"] = str(e)
                log(f"{row['label']}: FAILED: {e}")
                continue
            if then:
                then(row)
        self.items = []


def single(runner, runs, only, n, model, models, src_lang, trg_lang, lines, words, corpus, one_line,
           latency_posts, work, rows, kernels, auto):
    out_dir = os.path.join(work, "out")
    os.makedirs(out_dir)
    thread_counts = [1] if n == 1 else [1, n]
    arith_of = lambda name: "exact" if name == "exact" else "saturating"
    refs = {}  # arithmetic -> reseam's 1-thread output
    plan = Plan(rows)

    def reseam_cmd(arith, t, extra=()):
        return [RESEAM, "translate", "--offline", "--models", model, "--raw", "--no-split", "--arithmetic",
                arith, "--threads", str(t), *extra, src_lang, trg_lang]

    if "reseam" in only:
        # The first run packs the model (model.reseam); not timed.
        runner.run(reseam_cmd("exact", 1), env_with(), stdin=one_line, stdout=os.devnull)
        for arith in ("exact", "saturating"):
            for t in thread_counts:
                out = os.path.join(out_dir, f"reseam-{arith}-{t}.txt")

                def fn(i, arith=arith, t=t, out=out):
                    wall, rss, _ = runner.run(reseam_cmd(arith, t), env_with(), stdin=corpus, stdout=out)
                    return {"seconds": wall, "rss_mb": rss, "out": out}

                def start(arith=arith, t=t):
                    return runner.run(reseam_cmd(arith, t), env_with(), stdin=one_line, stdout=os.devnull)[0]

                def keep(row, arith=arith, t=t, out=out):
                    if t == 1:
                        refs[arith] = out

                plan.add({"id": f"reseam-{arith}-{t}", "engine": "reseam",
                          "label": f"reseam translate --raw --no-split ({arith})", "cores": t,
                          "arith": arith, "mode": "batch"}, fn, start, keep)
        if "pymarian" in only and first(model, "model.*.float32.bin"):
            # pymarian runs the float32 model: its reference is reseam on the same float32 model, on
            # the corpus's distinct lines (the float path is slow; output is per line).
            uniq = list(dict.fromkeys(lines))
            u_in, u_out = os.path.join(work, "uniq.txt"), os.path.join(work, "uniq.out")
            with open(u_in, "w", encoding="utf-8") as f:
                f.write("".join(l + "\n" for l in uniq))
            log(f"reseam on the float32 model ({len(uniq)} distinct lines, for pymarian's agreement)")
            try:
                runner.run(reseam_cmd(auto or "exact", n, ("--model", os.path.basename(first(model, "model.*.float32.bin")))),
                           env_with(), stdin=u_in, stdout=u_out)
                got = dict(zip(uniq, read_lines(u_out)))
                refs["float32"] = os.path.join(out_dir, "reseam-float32.txt")
                with open(refs["float32"], "w", encoding="utf-8") as f:
                    f.write("".join(got[l] + "\n" for l in lines))
            except Failed as e:
                log(f"reseam on the float32 model failed ({e}): pymarian's agreement is not counted")

    if "reseam-bench" in only:
        runner.run([RESEAM, "pack", "--models", models], env_with(), stdout=os.devnull)
        tsv = os.path.join(work, "corpus.tsv")
        with open(tsv, "w", encoding="utf-8") as f:
            f.write("".join(f"{src_lang}\t{trg_lang}\t{l}\n" for l in lines))
        for arith in ("exact", "saturating"):
            def fn(i, arith=arith):
                cmd = [RESEAM, "bench", "translate", "--models", models, "--corpus", tsv, "-n", str(len(lines)),
                       "--threads", str(n), "--clients", str(CLIENTS), "--arithmetic", arith,
                       "--latency-requests", str(latency_posts), "--json"]
                wall, rss, out = runner.run(cmd, env_with())
                j = helper_json(out)
                return {"seconds": j["seconds"], "rss_mb": j.get("peak_rss_mb", rss), "p50_ms": j["idle_p50_ms"],
                        "p99_ms": j["idle_p99_ms"], "load_p50_ms": j["p50_ms"], "load_p99_ms": j["p99_ms"],
                        "startup_s": j.get("load_s"), "bench": j}

            plan.add({"id": f"reseam-bench-{arith}", "engine": "reseam",
                      "label": f"reseam bench translate, {CLIENTS} clients ({arith})", "cores": n,
                      "arith": arith, "mode": "posts"}, fn)

    if "bergamot" in only:
        py = os.path.join(PEERS, "py310", "bin", "python")
        for kernel, arith in kernels:
            env = env_with(INTGEMM_CPUID=None if kernel == "default" else kernel)
            for mode, t in [("batch", 1)] + ([("batch", n)] if n > 1 else []) + [("post", 1)]:
                out = os.path.join(out_dir, f"bergamot-{kernel}-{mode}-{t}.txt")

                def fn(i, mode=mode, t=t, out=out, env=env):
                    wall, rss, text = runner.run([py, os.path.join(HERE, "bergamot.py"), mode, model, corpus, str(t), out], env)
                    j = helper_json(text)
                    return {"seconds": j["seconds"], "rss_mb": rss, "p50_ms": j.get("p50_ms"), "p99_ms": j.get("p99_ms"),
                            "load_s": j.get("load_s"), "out": out}

                def start(mode=mode, t=t, env=env):
                    return runner.run([py, os.path.join(HERE, "bergamot.py"), mode, model, one_line, str(t), os.devnull], env)[0]

                what = "all lines in one call" if mode == "batch" else "one post per call"
                plan.add({"id": f"bergamot-{kernel}-{mode}-{t}", "engine": "bergamot",
                          "label": f"native Bergamot, {'its default kernel' if kernel == 'default' else 'INTGEMM_CPUID=AVX2'}, "
                                   f"{t} worker{'s' if t > 1 else ''}, {what}",
                          "cores": t, "arith": arith, "mode": mode}, fn, start)

    if "fxtranslate-rs" in only:
        exe = os.path.join(PEERS, "fxtranslate-rs", "target", "release", "peers-fxtranslate")
        out = os.path.join(out_dir, "fxtranslate-rs.txt")

        def fn(i):
            wall, rss, text = runner.run([exe, model, corpus, str(n), "64", out, str(latency_posts)], env_with())
            j = helper_json(text)
            return {"seconds": j["seconds"], "rss_mb": rss, "p50_ms": j["p50_ms"], "p99_ms": j["p99_ms"],
                    "load_s": j["load_s"], "backend": j.get("backend"), "out": out}

        def start():
            return runner.run([exe, model, one_line, str(n), "64", os.devnull, "0"], env_with())[0]

        plan.add({"id": "fxtranslate-rs", "engine": "fxtranslate",
                  "label": f"fxtranslate crate, threads feature, {n} threads, batch 64", "cores": n,
                  "arith": "saturating", "mode": "batch",
                  "note": "p50/p99: translate() one post at a time (its per-post path is serial)"}, fn, start)

    if "fxtranslate-py" in only:
        py = os.path.join(PEERS, "py311", "bin", "python")
        out = os.path.join(out_dir, "fxtranslate-py.txt")

        def fn(i):
            wall, rss, text = runner.run([py, os.path.join(HERE, "fxtranslate_py.py"), model, corpus, out], env_with())
            j = helper_json(text)
            return {"seconds": j["seconds"], "rss_mb": rss, "p50_ms": j["p50_ms"], "p99_ms": j["p99_ms"],
                    "load_s": j["load_s"], "backend": j.get("backend"), "out": out}

        def start():
            return runner.run([py, os.path.join(HERE, "fxtranslate_py.py"), model, one_line, os.devnull], env_with())[0]

        plan.add({"id": "fxtranslate-py", "engine": "fxtranslate", "label": "fxtranslate PyPI wheel, one post per call",
                  "cores": 1, "arith": "saturating", "mode": "post"}, fn, start)

    if "wasm" in only:
        pkg = os.path.join(PEERS, "node", "node_modules", "@browsermt", "bergamot-translator")
        for t in thread_counts:
            out = os.path.join(out_dir, f"wasm-{t}.txt")
            lat = latency_posts if t == 1 else 0

            def fn(i, t=t, out=out, lat=lat):
                wall, rss, text = runner.run(["node", os.path.join(HERE, "wasm.mjs"), pkg, model, corpus, str(t),
                                              str(WASM_BATCH), out, str(lat)], env_with())
                j = helper_json(text)
                return {"seconds": j["seconds"], "rss_mb": rss, "p50_ms": j["p50_ms"], "p99_ms": j["p99_ms"],
                        "load_s": j["load_s"], "out": out}

            def start(t=t):
                return runner.run(["node", os.path.join(HERE, "wasm.mjs"), pkg, model, one_line, str(t),
                                   str(WASM_BATCH), os.devnull, "0"], env_with())[0]

            plan.add({"id": f"wasm-{t}", "engine": "bergamot-wasm",
                      "label": f"WASM Bergamot under Node.js, {t} worker{'s' if t > 1 else ''}, batch {WASM_BATCH}",
                      "cores": t, "arith": "saturating", "mode": "batch",
                      "note": "p50/p99: one post at a time, each awaited" if lat else None}, fn, start)

    if "pymarian" in only:
        exe = os.path.join(PEERS, "py311", "bin", "pymarian")
        fmodel = first(model, "model.*.float32.bin") or first(model, "model.*.npz")
        vocab = first(model, "vocab.*.spm")
        vocabs = [vocab, vocab] if vocab else [first(model, "srcvocab.*.spm"), first(model, "trgvocab.*.spm")]
        for t in thread_counts:
            out = os.path.join(out_dir, f"pymarian-{t}.txt")
            cmd = [exe, "decode", "-m", fmodel or "", "-v", *[v or "" for v in vocabs], "--cpu-threads", str(t),
                   "-b", "1", "--mini-batch", "32", "--maxi-batch", "100", "--max-length-factor", "2",
                   "--skip-cost", "--quiet"]
            row = {"id": f"pymarian-{t}", "engine": "pymarian",
                   "label": f"pymarian (mainline Marian), float32 model, {t} thread{'s' if t > 1 else ''}",
                   "cores": t, "arith": "float32", "mode": "batch",
                   "note": "seconds include its start-up (a CLI)"}
            if not fmodel:
                row["error"] = f"no model.*.float32.bin or .npz in {model} (pymarian cannot read Firefox's int8 model)"
                plan.rows.append(row)
                continue

            def fn(i, cmd=cmd, out=out):
                wall, rss, _ = runner.run(cmd, env_with(), stdin=corpus, stdout=out)
                return {"seconds": wall, "rss_mb": rss, "out": out}

            def start(cmd=cmd):
                return runner.run(cmd, env_with(), stdin=one_line, stdout=os.devnull)[0]

            plan.add(row, fn, start)

    plan.run(runs)

    # Figures, ratios and agreement.
    by_id = {r["id"]: r for r in rows}
    for r in rows:
        if r.get("error"):
            continue
        r["lines"] = len(lines)
        r["lines_per_s"] = len(lines) / r["seconds"]
        r["words_per_s"] = words / r["seconds"]
        arith = r["arith"] if r["arith"] != "float32" else (auto or "exact")
        if r["engine"] != "reseam":
            ref = by_id.get(f"reseam-{arith}-{r['cores']}")
            if ref and not ref.get("error"):
                r["reseam_ratio"] = ref["lines_per_s"] / r["lines_per_s"]
                r["reseam_ratio_vs"] = ref["id"]
        ref_out = refs.get("float32" if r["arith"] == "float32" else arith)
        if r.get("out") and ref_out and r["out"] != ref_out:
            r["agreement"] = agreement(r["out"], ref_out)
            r["agreement_vs"] = "reseam float32 model" if r["arith"] == "float32" else f"reseam {arith}, 1 thread"
        r.pop("out", None)


def directions(a, runner, runs, only, n, model_src, trg_lang, lines, words, latency_posts, work, rows, kernels):
    d = a.directions
    if d > len(LANGS):
        sys.exit(f"peers: at most {len(LANGS)} directions")
    # D copies of the model under pair names (the model does not know it is not that pair), as
    # benches/serve/run makes them.
    models = os.path.join(work, f"models-{d}")
    int8 = first(model_src, "model.*.intgemm.alphas.bin")
    code = os.path.basename(int8).split(".")[1]
    pairs = []
    for lang in LANGS[:d]:
        to = trg_lang if lang != trg_lang else "xx"
        pairs.append((lang, to))
        dst = os.path.join(models, f"{lang}-{to}")
        os.makedirs(dst)
        for pattern in ("model.*.intgemm.alphas.bin", "vocab.*.spm", "srcvocab.*.spm", "trgvocab.*.spm", "lex.*.s2t.bin"):
            p = first(model_src, pattern)
            if p:
                shutil.copy(p, os.path.join(dst, os.path.basename(p).replace(f".{code}.", f".{lang}{to}.")))
    tsv = os.path.join(work, "corpus.tsv")
    with open(tsv, "w", encoding="utf-8") as f:
        # Directions interleaved, so that concurrent clients always hit several models at once.
        f.write("".join(f"{pairs[i % d][0]}\t{pairs[i % d][1]}\t{l}\n" for i, l in enumerate(lines)))
    n_posts = len(lines)
    plan = Plan(rows)
    if "reseam-bench" in only:
        # Packs written before timing, so that the load time is a start's, not a first start's.
        runner.run([RESEAM, "pack", "--models", models], env_with(), stdout=os.devnull)
        for arith in ("exact", "saturating"):
            def fn(i, arith=arith):
                cmd = [RESEAM, "bench", "translate", "--models", models, "--corpus", tsv, "-n", str(n_posts),
                       "--threads", str(n), "--clients", str(CLIENTS), "--arithmetic", arith,
                       "--latency-requests", str(latency_posts), "--json"]
                wall, rss, out = runner.run(cmd, env_with())
                j = helper_json(out)
                return {"seconds": j["seconds"], "rss_mb": j.get("peak_rss_mb", rss), "p50_ms": j["p50_ms"],
                        "p99_ms": j["p99_ms"], "idle_p50_ms": j["idle_p50_ms"], "idle_p99_ms": j["idle_p99_ms"],
                        "startup_s": j.get("load_s"), "bench": j}

            plan.add({"id": f"reseam-bench-{arith}", "engine": "reseam",
                      "label": f"reseam bench translate, {d} models ({arith})", "cores": n, "arith": arith,
                      "mode": "clients", "clients": CLIENTS}, fn)
    if "bergamot" in only:
        py = os.path.join(PEERS, "py310", "bin", "python")
        for kernel, arith in kernels:
            env = env_with(INTGEMM_CPUID=None if kernel == "default" else kernel)

            name = "its default kernel" if kernel == "default" else "INTGEMM_CPUID=AVX2"

            def fn(i, env=env):
                wall, rss, text = runner.run([py, os.path.join(HERE, "bergamot.py"), "clients", models, tsv, str(n),
                                              str(CLIENTS)], env)
                j = helper_json(text)
                return {"seconds": j["seconds"], "rss_mb": rss, "p50_ms": j["p50_ms"], "p99_ms": j["p99_ms"],
                        "startup_s": j["load_s"], "in_flight": j["in_flight"]}

            def in_flight(row):
                if row.get("in_flight"):
                    row["label"] += f" ({row['in_flight']:.0f} posts in flight on average)"

            plan.add({"id": f"bergamot-{kernel}-clients", "engine": "bergamot",
                      "label": f"native Bergamot, {name}, one Service, {d} models, {n} workers, "
                               f"{CLIENTS} client threads",
                      "cores": n, "arith": arith, "mode": "clients", "clients": CLIENTS}, fn, then=in_flight)

            def grouped(i, env=env):
                wall, rss, text = runner.run([py, os.path.join(HERE, "bergamot.py"), "grouped", models, tsv, str(n)], env)
                j = helper_json(text)
                return {"seconds": j["seconds"], "rss_mb": rss, "startup_s": j["load_s"]}

            plan.add({"id": f"bergamot-{kernel}-grouped", "engine": "bergamot",
                      "label": f"native Bergamot, {name}, one Service, {d} models, {n} workers, "
                               "each model's posts in one call",
                      "cores": n, "arith": arith, "mode": "grouped"}, grouped)
    plan.run(runs)
    by_id = {r["id"]: r for r in rows}
    for r in rows:
        if r.get("error"):
            continue
        r["lines"] = n_posts
        r["lines_per_s"] = n_posts / r["seconds"]
        r["words_per_s"] = words / r["seconds"]
        if r["engine"] != "reseam":
            ref = by_id.get(f"reseam-bench-{r['arith']}")
            if ref and not ref.get("error"):
                r["reseam_ratio"] = ref["lines_per_s"] / r["lines_per_s"]
                r["reseam_ratio_vs"] = ref["id"]
                if r.get("p99_ms") and ref.get("p99_ms"):
                    r["p99_ratio"] = r["p99_ms"] / ref["p99_ms"]


def fmt(v, spec):
    return "—" if v is None else format(v, spec)


def by_round(rows, threads):
    """reseam × each row, and each engine's own scaling (its one-thread run over its n-thread
    run), round by round: how much of a median ratio is the machine's."""
    ok = {r["id"]: r for r in rows if not r.get("error")}

    def per_round(slow, fast):
        return ", ".join(f"{s / f:.2f}x" for s, f in zip(slow["all_seconds"], fast["all_seconds"]))

    notes = []
    for r in ok.values():
        ref = ok.get(r.get("reseam_ratio_vs", ""))
        if ref and len(r.get("all_seconds", [])) > 1:
            notes.append(f"- reseam × {r['label']}, round by round: {per_round(r, ref)}")
    n = threads
    for one, many, what in [(f"reseam-{a}-1", f"reseam-{a}-{n}", f"reseam translate ({a})") for a in ("exact", "saturating")] + \
            [(f"bergamot-{k}-batch-1", f"bergamot-{k}-batch-{n}", f"Bergamot ({k} kernel)") for k in ("default", "AVX2")]:
        a, b = ok.get(one), ok.get(many)
        if n > 1 and a and b:
            notes.append(f"- {what}, {n} threads over 1: {a['seconds'] / b['seconds']:.2f}x (medians); "
                         f"round by round: {per_round(a, b)}")
    return notes


def markdown(result):
    m, rows = result["meta"], result["rows"]
    multi = m["directions"] > 1
    spread = f", spread over {m['directions']} directions" if multi else ""
    out = [f"# reseam and its peers, {m['date']}", "",
           f"CPU: {m['cpu']} ({m['cpus']} CPUs; engines pinned to cores {m['cores'] or 'any'}); reseam's kernel "
           f"{m['reseam_isa']}{' (forced: RESEAM_MT_ISA)' if m.get('reseam_isa_forced') else ''}, `auto` = {m['reseam_auto_arithmetic']}; intgemm's default kernel here is "
           f"{m['bergamot_default_arithmetic']}. reseam {m['reseam_commit']}.",
           f"Model {m['model']} ({m['pair']}); corpus {m['corpus']}: {m['lines']} lines, {m['source_words']} source "
           f"words{spread}; "
           f"{m['threads']} threads; median of {m['runs']} run(s){' (--quick)' if m['quick'] else ''}, in rounds (each runs every row once). "
           f"Load average {m['load_before'][0]:.2f} before, {m['load_after'][0]:.2f} after (a shared machine).", ""]
    if multi:
        out += ["| engine | cores | arithmetic | posts/s | words/s | p50 ms | p99 ms | peak RSS MiB | load s | reseam × | p99 × reseam |",
                "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in rows:
            if r.get("error"):
                out.append(f"| {r['label']} | {r['cores']} | {r['arith']} | failed: {r['error'][:200]} |||||||")
                continue
            out.append(f"| {r['label']} | {r['cores']} | {r['arith']} | {r['lines_per_s']:.0f} | {r['words_per_s']:.0f} | "
                       f"{fmt(r.get('p50_ms'), '.1f')} | {fmt(r.get('p99_ms'), '.1f')} | {fmt(r.get('rss_mb'), '.0f')} | "
                       f"{fmt(r.get('startup_s'), '.2f')} | {fmt(r.get('reseam_ratio'), '.2f')} | {fmt(r.get('p99_ratio'), '.1f')} |")
        out += ["", f"p50/p99: latency of each post under {m['clients']} concurrent clients (each sends one post and waits; "
                "Bergamot's clients are Python threads, and its binding holds the GIL through part of each call, so fewer "
                "posts are in flight than there are clients). "
                "reseam ×: reseam's posts/s over the row's, same arithmetic. p99 × reseam: the row's p99 over reseam's. "
                "Load s: the models' load time in the process."]
        notes = by_round(rows, m["threads"])
        return "\n".join(out + ([""] + notes if notes else [])) + "\n"
    out += ["| engine | cores | arithmetic | seconds | posts/s | words/s | p50 ms | p99 ms | peak RSS MiB | start-up s | reseam × | = reseam |",
            "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r.get("error"):
            out.append(f"| {r['label']} | {r['cores']} | {r['arith']} | failed: {r['error'][:200]} ||||||||")
            continue
        agree = r.get("agreement")
        out.append(f"| {r['label']} | {r['cores']} | {r['arith']} | {r['seconds']:.2f} | {r['lines_per_s']:.0f} | "
                   f"{r['words_per_s']:.0f} | {fmt(r.get('p50_ms'), '.1f')} | {fmt(r.get('p99_ms'), '.1f')} | "
                   f"{fmt(r.get('rss_mb'), '.0f')} | {fmt(r.get('startup_s'), '.2f')} | {fmt(r.get('reseam_ratio'), '.2f')} | "
                   f"{agree['equal'] if agree else '—'}{'/' + str(agree['of']) if agree else ''} |")
    out += ["", "posts/s: lines per second of the timed part (helpers: after loading; CLIs: the whole process). "
            "p50/p99: one post at a time on an idle engine (reseam: `bench translate`'s idle phase; Bergamot and "
            "fxtranslate PyPI: the one-post-per-call run; fxtranslate crate and WASM: a phase of "
            f"{m['latency_posts']} posts after the batch run). Start-up: wall time of the same command on one line (reseam bench translate: its own load time). "
            "reseam ×: reseam translate's posts/s at the row's cores and arithmetic over the row's "
            "(exact against Bergamot's default kernel on VNNI CPUs, saturating against INTGEMM_CPUID=AVX2 or, on CPUs "
            "without AVX-512, the default kernel, which is AVX2 there, "
            "fxtranslate and WASM). = reseam: output lines equal to reseam's (1 thread, same arithmetic; pymarian: "
            "reseam on the same float32 model)."]
    bench = {r["id"]: r for r in rows if not r.get("error")}
    notes = []
    for arith, berg in ((m["bergamot_default_arithmetic"], "bergamot-default-batch-"), ("saturating", "bergamot-AVX2-batch-")):
        b, rb = bench.get(f"{berg}{m['threads']}"), bench.get(f"reseam-bench-{arith}")
        if b and rb:
            notes.append(f"- `reseam bench translate` ({arith}, {m['clients']} clients) / {b['label']}: "
                         f"{rb['lines_per_s'] / b['lines_per_s']:.2f}x")
    peer_p99 = [(r["p99_ms"], r["label"]) for r in rows if not r.get("error") and r["engine"] != "reseam" and r.get("p99_ms")]
    own = [(r["p99_ms"], r["label"]) for r in rows if not r.get("error") and r["id"].startswith("reseam-bench") and r.get("p99_ms")]
    if peer_p99 and own:
        best, mine = min(peer_p99), min(own)
        notes.append(f"- idle single-post p99: reseam {mine[0]:.1f} ms ({mine[1]}); the best peer's {best[0]:.1f} ms "
                     f"({best[1]}): {mine[0] / best[0]:.2f} of it")
    notes += by_round(rows, m["threads"])
    if notes:
        out += [""] + notes
    return "\n".join(out) + "\n"


def write_results(result):
    d = os.path.join(PEERS, "results")
    os.makedirs(d, exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H%M%S")
    m = result["meta"]
    name = f"{stamp}{'-quick' if m['quick'] else ''}{'-d' + str(m['directions']) if m['directions'] > 1 else ''}"
    md = markdown(result)
    with open(os.path.join(d, name + ".json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(d, name + ".md"), "w", encoding="utf-8") as f:
        f.write(md)
    print(md)
    log(f"wrote {os.path.join(d, name)}.json and .md")


if __name__ == "__main__":
    main()
