#!/usr/bin/env python3
"""Summarises the reports of run.sh (standard library only): medians over the batched
repetitions, the checks of issue #32, and the tables of docs/speculate-trained.md.

    python3 docs/speculate-trained/summarise.py WORK OUT

WORK holds run.sh's files; OUT gets medians.csv, checks.txt and the committed copies (one
repetition's JSON without per-prompt ids, its CSV and SVG per prompt set and draft).
"""

import csv
import json
import statistics
import shutil
import sys
from pathlib import Path

SETS = ["wiki", "instructions", "questions"]
# NAME-fr: the draft NAME with its output layer cut to the training text's ids (--draft-vocab-corpus).
DRAFTS = ["target-mistral", "draft-mistral", "draft-qwen2", "draft-llama3", "draft-apt4like",
          "draft-mistral-fr", "draft-qwen2-fr", "draft-llama3-fr"]
CROSS = ["draft-qwen2", "draft-llama3", "draft-apt4like", "draft-qwen2-fr", "draft-llama3-fr"]
SAME = ["draft-mistral", "draft-mistral-fr"]
KS = ["1", "2", "4", "6", "auto"]
STRATS = ["none", "naive", "context"]


def load(p):
    return json.loads(Path(p).read_text())


def main():
    work, out = Path(sys.argv[1]), Path(sys.argv[2])
    rows, checks, seg = [], [], {}
    med = {}
    for s in SETS:
        for d in DRAFTS:
            reps = sorted(work.glob(f"{s}-{d}-rep*.json"))
            if not reps:
                continue
            reports = [load(r) for r in reps]
            exact = load(work / f"{s}-{d}-exact.json")
            seg[(s, d)] = reports[0]["segmentation"]
            n = len(reports[0]["baseline"]["prompts"])
            base = [r["baseline"]["decode_tokens_per_s"] for r in reports]
            for i, run in enumerate(reports[0]["runs"]):
                k, st = str(run["k"]), run["strategy"]
                sp = [r["runs"][i]["speedup"] for r in reports]
                pr = [r["runs"][i]["predicted_speedup_measured_costs"] for r in reports]
                lev = [r["runs"][i]["predicted_speedup"] for r in reports]
                cs = [r["runs"][i]["c"] for r in reports]
                be = [r["runs"][i]["break_even_acceptance"]["geometric"] for r in reports]
                ex = exact["runs"][i]
                assert (str(ex["k"]), ex["strategy"]) == (k, st)
                m = statistics.median(sp)
                # The span of the repetitions' 95% intervals (from the lowest low to the highest
                # high: it holds every repetition's speedup and so their median); reports before
                # 2026-12-05 have none.
                cis = [r["runs"][i].get("speedup_ci") for r in reports]
                ci = {"low": min(c["low"] for c in cis), "high": max(c["high"] for c in cis)} if all(cis) else None
                verdict = None if ci is None else (
                    "faster" if ci["low"] > 1 else "slower" if ci["high"] < 1 else "no_measurable_difference")
                guards = [r["runs"][i].get("target_alone") for r in reports]
                p = statistics.median(pr) if all(x is not None for x in pr) else None
                row = dict(
                    set=s,
                    draft=d,
                    strategy=st,
                    k=k,
                    acceptance=run["acceptance_rate"],
                    acceptance_draft_units=run["acceptance_rate_draft"],
                    draft_accuracy=run["draft_accuracy"],
                    alpha_hat=run["alpha_hat"],
                    tokens_per_pass=run["tokens_per_pass"],
                    mean_k=run["mean_k"],
                    proposed=run["proposed"],
                    c=statistics.median(cs) if all(x is not None for x in cs) else None,
                    speedup=m,
                    speedup_min=min(sp),
                    speedup_max=max(sp),
                    speedup_ci_low=ci["low"] if ci else None,
                    speedup_ci_high=ci["high"] if ci else None,
                    verdict=verdict,
                    # Repetitions whose interval lies wholly above 1 (none is "faster" where no
                    # repetition drafted).
                    faster_reps=sum(r["runs"][i].get("speedup_verdict") == "faster" for r in reports),
                    drafting_share=statistics.median(r["runs"][i].get("drafting_rounds", 0) / max(r["runs"][i]["rounds"], 1)
                                                     for r in reports),
                    target_alone_reps=sum(g is not None for g in guards),
                    drifted_reps=sum(bool(g and g["drifted"]) for g in guards),
                    expected_target_alone=statistics.median(g["expected_speedup"] for g in guards) if all(guards) else None,
                    predicted_measured_costs=p,
                    predicted_leviathan=statistics.median(lev) if all(x is not None for x in lev) else None,
                    gap=(p / m - 1) if p is not None and m else None,
                    break_even=statistics.median(be) if all(x is not None for x in be) else None,
                    baseline_tokens_per_s=statistics.median(base),
                    identical_exact=f"{ex['identical_prompts']}/{n}",
                    identical_batched=f"{min(r['runs'][i]['identical_prompts'] for r in reports)}/{n}",
                    reps=len(reports),
                )
                rows.append(row)
                med[(s, d, st, k)] = row
            # Committed copies: the first repetition, per-prompt id lists dropped (kept in WORK).
            r0 = reports[0]
            for run in r0["runs"]:
                for p in run["prompts"]:
                    p.pop("baseline_ids", None)
                    p.pop("output_ids", None)
            for p in r0["baseline"]["prompts"]:
                p.pop("prompt_ids", None)
                p.pop("output_ids", None)
            (out / f"{s}-{d}.json").write_text(json.dumps(r0, indent=1, ensure_ascii=False) + "\n")
            shutil.copy(reps[0].with_suffix(".csv"), out / f"{s}-{d}.csv")
            shutil.copy(reps[0].with_suffix(".svg"), out / f"{s}-{d}.svg")
    with open(out / "medians.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in r.items()})

    def ok(cond, text):
        checks.append(("PASS " if cond else "FAIL ") + text)

    ok(all(r["identical_exact"].split("/")[0] == r["identical_exact"].split("/")[1] for r in rows),
       f"--verify exact: output identical to the target alone in all {len(rows)} configurations")
    ok(all(r["identical_batched"].split("/")[0] == r["identical_batched"].split("/")[1] for r in rows),
       "--verify batched: identical too")
    for d in CROSS:
        for k in KS:
            a = med.get(("instructions", d, "context", k))
            b = med.get(("instructions", d, "naive", k))
            if a and b:
                if max(a["proposed"], b["proposed"]) < 50:
                    # -k auto judged drafting not to pay after a probe or two: no acceptance to compare.
                    checks.append(f"N/A  instructions {d} k={k}: auto proposed {a['proposed']} (context) and "
                                  f"{b['proposed']} (naive) candidates in all prompts")
                    continue
                ok(a["acceptance"] > b["acceptance"],
                   f"instructions {d} k={k}: context {a['acceptance']:.3f} > naive {b['acceptance']:.3f}")
    for d in SAME:
        for k in KS:
            n = med.get(("instructions", d, "none", k))
            for st in ["naive", "context"]:
                x = med.get(("instructions", d, st, k))
                if n and x:
                    ok(x["acceptance"] >= 0.9 * n["acceptance"],
                       f"instructions {d} k={k}: {st} {x['acceptance']:.3f} >= 90% of none {n['acceptance']:.3f}")
    for s in SETS:
        for d in DRAFTS:
            for st in STRATS:
                fixed = [med[(s, d, st, k)]["speedup"] for k in KS[:-1] if (s, d, st, k) in med]
                a = med.get((s, d, st, "auto"))
                if not fixed or not a:
                    continue
                best = max(fixed)
                ok(a["speedup"] >= 0.95 * best,
                   f"{s} {d} {st}: auto {a['speedup']:.3f} within 5% of best fixed {best:.3f}")
                ok(a["speedup"] >= 0.95, f"{s} {d} {st}: auto {a['speedup']:.3f} not >5% slower than the target alone")
    # The wording: per prompt set and draft, -k auto (its best strategy) against the best
    # fixed k (any strategy); the per-strategy checks above are the stricter form.
    for s in SETS:
        for d in DRAFTS:
            fixed = [med[(s, d, st, k)]["speedup"] for st in STRATS for k in KS[:-1] if (s, d, st, k) in med]
            autos = [med[(s, d, st, "auto")]["speedup"] for st in STRATS if (s, d, st, "auto") in med]
            if fixed and autos:
                ok(max(autos) >= 0.95 * max(fixed),
                   f"{s} {d} (best strategy): auto {max(autos):.3f} within 5% of best fixed {max(fixed):.3f}")
    # Issue #50: a configuration that drafted (almost) nothing in every repetition gains nothing:
    # its interval contains 1 or lies below it, and it stays within its interval of the target
    # alone plus its measured overhead (no drift warning).
    idle = [r for r in rows if r["target_alone_reps"] == r["reps"]]
    if idle and any(r["verdict"] for r in idle):
        bad = [r for r in idle if r["faster_reps"]]
        ok(not bad,
           f"drafted almost nothing (<= 5% of rounds, every repetition): no repetition's interval above 1 in "
           f"{len(idle) - len(bad)}/{len(idle)}"
           + "".join(f"; {r['set']} {r['draft']} {r['strategy']} k={r['k']} {r['speedup']:.3f}" for r in bad))
        drift = [r for r in idle if r["drifted_reps"]]
        ok(not drift,
           f"drafted almost nothing: within its interval of the target alone plus its overhead in "
           f"{len(idle) - len(drift)}/{len(idle)}"
           + "".join(f"; {r['set']} {r['draft']} {r['strategy']} k={r['k']} ({r['drifted_reps']} of {r['reps']})"
                     for r in drift))
        faster = [r for r in rows if r["verdict"] == "faster"]
        same = [r for r in rows if r["verdict"] == "no_measurable_difference"]
        checks.append(f"INFO verdict over the span of the repetitions' intervals: faster {len(faster)}, no measurable difference "
                      f"{len(same)}, slower {len(rows) - len(faster) - len(same)} of {len(rows)}")
    gaps = [r for r in rows if r["gap"] is not None]
    worst = max(gaps, key=lambda r: abs(r["gap"]))
    ok(all(abs(r["gap"]) <= 0.15 for r in gaps),
       f"prediction from measured costs within 15% of measured speedup in {sum(abs(r['gap']) <= 0.15 for r in gaps)}/{len(gaps)}"
       f" (worst {worst['set']} {worst['draft']} {worst['strategy']} k={worst['k']}: {worst['gap']:+.1%})")
    (out / "checks.txt").write_text("\n".join(checks) + "\n")
    pct = lambda x: "–" if x is None else f"{100 * x:.0f}%"
    fx = lambda x: "–" if x is None else f"{x:.2f}"

    def times(r):
        # The median speedup with the span of the repetitions' 95% intervals, "≈" when it holds 1.
        if r["speedup_ci_low"] is None:
            return f"{r['speedup']:.2f}x"
        mark = " ≈" if r["verdict"] == "no_measurable_difference" else ""
        return f"{r['speedup']:.2f}x [{r['speedup_ci_low']:.2f}, {r['speedup_ci_high']:.2f}]{mark}"
    lines = [
        "| set | draft | acceptance k=2: none / naive / context | draft accuracy (context k=2) | c | best fixed: strategy k, speedup [95% interval] | auto (context) [95% interval] | k=2 context: predicted | break-even k=2 / k=6 (context) | tokens/word target / draft | shared boundaries |",
        "| --- | --- | --- | ---: | ---: | --- | ---: | ---: | --- | --- | ---: |",
    ]
    for s_ in SETS:
        for d in DRAFTS:
            if (s_, d, "context", "2") not in med:
                continue
            a = [med[(s_, d, st, "2")]["acceptance"] for st in STRATS]
            ctx = med[(s_, d, "context", "2")]
            best = max((med[(s_, d, st, k)] for st in STRATS for k in KS[:-1]), key=lambda r: r["speedup"])
            auto = med[(s_, d, "context", "auto")]
            g = seg[(s_, d)]
            lines.append(
                f"| {s_} | {d} | {' / '.join(pct(x) for x in a)} | {pct(ctx['draft_accuracy'])} | {fx(ctx['c'])} | "
                f"{best['strategy']} {best['k']}, {times(best)} | {times(auto)} | "
                f"{fx(ctx['predicted_measured_costs'])}x vs {ctx['speedup']:.2f}x | "
                f"{pct(ctx['break_even'])} / {pct(med[(s_, d, 'context', '6')]['break_even'])} | "
                f"{g['target_tokens_per_word']:.2f} / {g['draft_tokens_per_word']:.2f} | {pct(g['shared_boundary_rate'])} |"
            )
    (out / "table.md").write_text("\n".join(lines) + "\n")
    with open(out / "segmentation.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["set", "draft", "words", "target_tokens_per_word", "draft_tokens_per_word", "shared_boundary_rate"])
        for (s, d), g in seg.items():
            w.writerow([s, d, g["words"], f"{g['target_tokens_per_word']:.3f}", f"{g['draft_tokens_per_word']:.3f}",
                        f"{g['shared_boundary_rate']:.3f}"])
    print("\n".join(checks))


if __name__ == "__main__":
    main()
