#!/usr/bin/env bash
# Every benchmark behind the figures in docs/benchmarks.md, with the exact commands.
# Usage: bash benchmarks/run_all.sh [DB]   (DB: a database where the scifact source is indexed,
# so the retrieval benchmark reuses its cached embeddings; default: a fresh temporary one)
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_WAIT_POLICY=PASSIVE HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
D=../shared/data
R=benchmarks/results
CS=".venv/bin/claimscope"
mkdir -p "$R"
DB_ARGS=()
[ -n "${1:-}" ] && DB_ARGS=(--db "$1")

$CS eval verifier --dataset fever-symmetric --path $D/fever_symmetric/dev.jsonl --baselines --json $R/verifier_fever_symmetric.json
$CS eval verifier --dataset vitaminc --path $D/vitaminc/real_dev_half.jsonl --split dev --baselines --json $R/verifier_vitaminc_real_devpages.json
$CS eval verifier --dataset vitaminc --path $D/vitaminc/synthetic_dev_half.jsonl --split dev --baselines --json $R/verifier_vitaminc_synthetic_devpages.json
$CS eval verifier --dataset scifact --path $D/scifact/claims_dev.jsonl --corpus $D/scifact/corpus.jsonl --baselines --json $R/verifier_scifact.json
$CS eval verifier --dataset climate-fever --path $D/climate_fever/dev.jsonl --baselines --json $R/verifier_climate_fever.json
$CS eval verifier --dataset wice --path $D/wice/oracle_chunks/claim/dev.jsonl --baselines --json $R/verifier_wice.json
for set in snli/dev lingnli/dev fm2/dev check_covid/dev citation_integrity/dev anli/dev_r1; do
  name=$(echo "$set" | tr / _)
  $CS eval verifier --dataset nli --path $D/nli/$set.jsonl.gz --limit 2000 --baselines --json $R/verifier_nli_$name.json
done
$CS eval verdicts --path $D/climate_fever/dev.jsonl --json $R/verdicts_climate_fever.json
$CS eval decompose --dataset factscore --path $D/factscore/ChatGPT_dev.jsonl --json $R/decompose_factscore_chatgpt.json
$CS eval decompose --dataset factcheck-gpt --path $D/factcheck_gpt/dev.jsonl --json $R/decompose_factcheck_gpt.json
.venv/bin/python benchmarks/nli_speed.py --json $R/nli_speed.json
$CS "${DB_ARGS[@]}" eval retrieval --dataset scifact --claims $D/scifact/claims_dev.jsonl --corpus $D/scifact/corpus.jsonl --json $R/retrieval_scifact_dev.json
# Grounding, LLM-AggreFact protocol (issue 15); --limit as measured on the shared 2-core machine (drop it on a free one)
$CS eval grounding --dataset wice --path $D/wice/entailment_retrieval/claim/dev.jsonl --limit 100 --ablations --json $R/grounding_wice.json
$CS eval grounding --dataset expertqa --path $D/expertqa/dev.jsonl --limit 300 --ablations --json $R/grounding_expertqa.json
$CS eval grounding --dataset factcheck-gpt --path $D/factcheck_gpt/dev.jsonl --ablations --json $R/grounding_factcheck_gpt.json
