#!/bin/sh
# Measures the trained fixture family (tests/fixtures/llm-trained) with `reseam speculate`:
# every draft (and the large-vocabulary ones again with --draft-vocab-corpus, as NAME-fr)
# against target-mistral on each prompt set, strategies none/naive/context,
# k = 1, 2, 4, 6, auto. REPS batched runs (files already in WORK are kept) (timings; the summary takes medians) and one
# --verify exact run (output identical to the target alone). The batched runs time the target
# alone paired with each configuration (BASELINE=once for one baseline per invocation, as before
# 2026-12-03), each prompt through every configuration in turn (ORDER=grouped for one
# configuration over all prompts at a time, as before 2026-12-04). Run from the repository root:
#   RESEAM=target/release/reseam REPS=3 sh docs/speculate-trained/run.sh
set -eu
RESEAM=${RESEAM:-target/release/reseam}
REPS=${REPS:-3}
OUT=${OUT:-docs/speculate-trained}
WORK=${WORK:-${TMPDIR:-/tmp}/speculate-trained}
F=tests/fixtures/llm-trained
mkdir -p "$WORK/packs"
for set in wiki instructions questions; do
  p=$F/prompts/$set.txt
  [ -f "$p" ] || p=$F/prompts/$set.jsonl
  for d in target-mistral draft-mistral draft-qwen2 draft-llama3 draft-apt4like draft-mistral-fr draft-qwen2-fr draft-llama3-fr; do
    # NAME-fr: the draft NAME with its output layer cut to the ids of the training text (FR-Spec).
    case $d in
      *-fr) draft="$F/${d%-fr} --draft-vocab-corpus $F/corpus/pud-pl-en.tsv" ;;
      *) draft=$F/$d ;;
    esac
    common="--target $F/target-mistral --draft $draft --prompts $p -k 1,2,4,6,auto --strategy none,naive,context --max-new-tokens 64 --ignore-eos --pack-dir $WORK/packs"
    echo "== $set $d exact $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    [ -f "$WORK/$set-$d-exact.json" ] ||
      $RESEAM speculate $common --verify exact --json "$WORK/$set-$d-exact.json" > /dev/null
    r=1
    while [ $r -le "$REPS" ]; do
      echo "== $set $d rep $r $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
      [ -f "$WORK/$set-$d-rep$r.svg" ] ||
        $RESEAM speculate $common --baseline "${BASELINE:-paired}" --order "${ORDER:-interleaved}" --json "$WORK/$set-$d-rep$r.json" --csv "$WORK/$set-$d-rep$r.csv" \
          --plot "$WORK/$set-$d-rep$r.svg" > /dev/null
      r=$((r + 1))
    done
  done
done
