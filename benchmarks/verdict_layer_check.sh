#!/usr/bin/env bash
# The verdict layer under a candidate verifier, against the shipped verifier with its verdict file
# (docs/verifier_v2.md, "Shipping run9a: the verdicts measured, not shipped"). Why: a verifier can
# gain on its own sets (grounding, FEVER-Symmetric, VitaminC) and still make the product's verdicts
# worse, so a candidate is screened on the verdict measures before it is chosen: Climate-FEVER held-out
# macro-F1, Factcheck-GPT agreement and kappa, SciFact-150 macro-F1 and the demo
# (benchmarks/verdict_candidates.py score, paired bootstrap over claims).
#
#   bash benchmarks/verdict_layer_check.sh MODEL SUPPORT OUT WIKI_DB SCIFACT_DB
#
# MODEL: the candidate's folder (its ONNX copies built: python -m models.onnx_build MODEL, so it
# runs on the product's runtime). SUPPORT: its support threshold, fitted on given documents
# (benchmarks/grounding_fit_pool.py); refute and conflict are fitted here on the Climate-FEVER
# fit half with support held (eval verdicts --fix-support). WIKI_DB / SCIFACT_DB: databases with
# the wiki-vital and scifact sources (benchmarks/fit_verdicts.py). OUT gets the judgements (they
# hold dataset text: keep OUT outside the repository), three verdict files and score.json:
#   K the shipped verdict file unchanged; R the per-kind sets refitted over the shipped top-level
#   set (given documents); F every set refitted, the top-level one on Climate-FEVER + VitaminC.
# score.txt also says, per verdict file, whether it gets the sanity cases right (the subject's own
# document with one decisive unit, or with nothing decisive, for each kind of source): a file that
# says "supported" with no supporting unit is not shippable, whatever its measures.
# ANCHORS=SHARE (default 0) adds fit_verdicts.py's anchor rows to R's and F's refits, weighing SHARE
# of one dataset: the sanity cases' situation as training rows (docs/verifier_v2.md, "Anchor rows").
# The shipped verifier's judgements are collected once into OUT/../shipped (reused while the shipped
# weights and thresholds are unchanged).
# About 8 minutes per candidate and 3 for the shipped one, on one thread of this machine.
set -euo pipefail
[ $# -eq 5 ] || { echo "usage: $0 MODEL SUPPORT OUT WIKI_DB SCIFACT_DB" >&2; exit 2; }
MODEL=$(realpath "$1"); S=$2; OUT=$(realpath -m "$3"); WIKI=$(realpath "$4"); SCI=$(realpath "$5")
ROOT=$(cd "$(dirname "$0")/.." && pwd); cd "$ROOT"
PY=${PYTHON:-python}
ANCHORS=${ANCHORS:-0}
export CLAIMSCOPE_THREADS=${CLAIMSCOPE_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
SHIPPED=$(dirname "$OUT")/shipped
BENCHES="demo climate-fever factcheck-gpt scifact"
collect() {  # DIR: the four benchmarks' judgements with the settings of CLAIMSCOPE_CONFIG
  for b in $BENCHES; do
    [ -s "$1/$b.jsonl" ] || "$PY" benchmarks/verdict_candidates.py collect --bench "$b" --wiki-db "$WIKI" \
      --scifact-db "$SCI" --limit 150 --out "$1/$b.jsonl"
  done
}
rows() { for b in $BENCHES; do printf '%s ' "$1/$b.jsonl"; done; }
mkdir -p "$OUT" "$SHIPPED"
printf '' > "$SHIPPED/settings.toml"  # the shipped verifier and thresholds, whatever the user's file says
T0=$("$PY" -c "from core.verify.base import Thresholds as T; t = T(); print(f'{t.support},{t.refute},{t.conflict}')")
# the shipped judgements are reused only while the shipped weights and thresholds are the same
STAMP="$(sha256sum models/verifier/model.safetensors | cut -c1-64) $T0"
if [ "$(cat "$SHIPPED/stamp" 2>/dev/null)" != "$STAMP" ]; then rm -f "$SHIPPED"/*.jsonl; echo "$STAMP" > "$SHIPPED/stamp"; fi
CLAIMSCOPE_CONFIG="$SHIPPED/settings.toml" collect "$SHIPPED"
printf '[run]\nverifier = "%s"\n[thresholds]\nsupport = %s\n' "$MODEL" "$S" > "$OUT/support.toml"
CLAIMSCOPE_CONFIG="$OUT/support.toml" "$PY" -m tui.cli eval verdicts --path ../shared/data/climate_fever/dev.jsonl \
  --verifier "$MODEL" --fix-support "$S" --json "$OUT/verdicts_climate_fever.json" > "$OUT/verdicts_climate_fever.log"
read -r R C < <("$PY" -c "import json,sys; t = json.load(open(sys.argv[1]))['systems']['fitted']['thresholds']; \
print(t['refute'], t['conflict'])" "$OUT/verdicts_climate_fever.json")
printf '[run]\nverifier = "%s"\n[thresholds]\nsupport = %s\nrefute = %s\nconflict = %s\n' "$MODEL" "$S" "$R" "$C" > "$OUT/settings.toml"
export CLAIMSCOPE_CONFIG="$OUT/settings.toml"
echo "candidate thresholds: support $S, refute $R, conflict $C"
collect "$OUT"
"$PY" benchmarks/fit_verdicts.py --only climate-fever,vitaminc --cache "$OUT/train_cfvc.jsonl" --out "$OUT/m_cfvc.json" > "$OUT/fit.log"
"$PY" benchmarks/fit_verdicts.py --only fever-wiki --wiki-db "$WIKI" --fever-limit 600 --cache "$OUT/train_fever.jsonl" \
  --out "$OUT/m_fever.json" >> "$OUT/fit.log"
"$PY" benchmarks/fit_verdicts.py --only scifact --scifact-db "$SCI" --scifact-limit 200 --cache "$OUT/train_sci.jsonl" \
  --out "$OUT/m_sci.json" >> "$OUT/fit.log"
KINDS=(--by-kind "entity=$OUT/train_cfvc.jsonl,$OUT/train_fever.jsonl" --by-kind "abstract=$OUT/train_sci.jsonl")
cp core/verify/data/verdict_model.json "$OUT/shipped.json"
cp core/verify/data/verdict_model.json "$OUT/K.json"
"$PY" benchmarks/fit_verdicts.py --fallback "$OUT/shipped.json" "${KINDS[@]}" --anchors "$ANCHORS" --out "$OUT/R.json" >> "$OUT/fit.log"
"$PY" benchmarks/fit_verdicts.py --from-cache "$OUT/train_cfvc.jsonl" "${KINDS[@]}" --anchors "$ANCHORS" --out "$OUT/F.json" >> "$OUT/fit.log"
unset CLAIMSCOPE_CONFIG
# shellcheck disable=SC2046
"$PY" benchmarks/verdict_candidates.py score --rows $(rows "$OUT") --thresholds "$S,$R,$C" \
  --baseline-rows $(rows "$SHIPPED") --baseline-thresholds "$T0" \
  --models "$OUT/shipped.json" "$OUT/K.json" "$OUT/R.json" "$OUT/F.json" --json "$OUT/score.json" | tee "$OUT/score.txt"
