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
# issue 17: the rules decomposer against FActScore's own decomposition (Jaccard one-to-one, PropSegmEnt)
FS="--path $D/factscore/InstructGPT_dev.jsonl --path $D/factscore/ChatGPT_dev.jsonl --path $D/factscore/PerplexityAI_dev.jsonl"
$CS eval decompose --match jaccard --decomposers sentence,rules $FS --fold '!0/3' --json $R/decompose_factscore_heldout_jaccard.json
$CS eval decompose --match jaccard --decomposers sentence,rules $FS --fold '0/3' --json $R/decompose_factscore_devfold_jaccard.json
$CS eval decompose --match jaccard --decomposers sentence,rules $FS --json $R/decompose_factscore_all_jaccard.json
$CS eval decompose --match jaccard --decomposers sentence,rules --path $D/decomposition/feverfact.test.jsonl --json $R/decompose_feverfact_test_jaccard.json
$CS eval decompose --match embedding --decomposers sentence,rules $FS --fold '!0/3' --json $R/decompose_factscore_heldout_embedding.json
$CS eval decompose --match nli --decomposers sentence,rules $FS --fold '!0/3' --limit 4 --json $R/decompose_factscore_heldout_nli_limit4.json
.venv/bin/python benchmarks/decompose_side_by_side.py --path $D/factscore/InstructGPT_dev.jsonl --fold '!0/3' --n 5 --json $R/decompose_side_by_side.json
.venv/bin/python benchmarks/nli_speed.py --json $R/nli_speed.json
$CS "${DB_ARGS[@]}" eval retrieval --dataset scifact --claims $D/scifact/claims_dev.jsonl --corpus $D/scifact/corpus.jsonl --json $R/retrieval_scifact_dev.json
