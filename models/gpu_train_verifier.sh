#!/usr/bin/env bash
# Train the verifier on the lent GPU machine from a bundle built here (docs/verifier_v2.md,
# "Training on a GPU when one is lent"). The machine gets the repository and nothing beside it:
# no ../shared, no claimscope install, but its python3 has torch, transformers and safetensors.
#
#   here:   python -m models.train_nli --config C --out unused --export-bundle gpu/mix.json.xz
#           (gpu/ listed in .git/info/exclude, and carried: run(..., carry=["gpu"]))
#   there:  bash models/gpu_train_verifier.sh C gpu/mix.json.xz NAME [more train_nli arguments]
#   here:   bash models/gpu_train_verifier.sh --join FILES_AT runs/NAME
#
# There the run writes to /tmp/NAME and copies back what $OUT can carry (files of at most
# 16 MiB, 8 files): the summary, the training log, the console log and model.safetensors cut
# into 15 MiB parts (the card is rewritten here with --card-only);
# --join puts the parts back together here, checks the sha256, and adds the tokenizer files.
# DEVICE=cpu runs the same steps on the CPU (how the script is tested without a GPU).
set -euo pipefail

if [[ "${1:-}" == "--join" ]]; then
    from=$2 to=$3
    mkdir -p "$to"
    cat "$from"/model.safetensors.part-* > "$to/model.safetensors"
    (cd "$to" && sha256sum -c "$from/model.safetensors.sha256" --status) \
        || { echo "model.safetensors: sha256 differs from the device's" >&2; exit 1; }
    cp "$from"/config.json "$from"/training_summary.json "$from"/training_log.jsonl "$to/"
    cp models/verifier/tokenizer.json models/verifier/tokenizer_config.json "$to/"
    echo "joined $to ($(du -h "$to/model.safetensors" | cut -f1)); its card: python -m models.train_nli --config C --out $to --card-only"
    exit 0
fi

config=$1 bundle=$2 name=$3
shift 3
out=${OUT:?set by the device tool: the folder whose files come back}
work=/tmp/$name
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
python3 -c "import torch, transformers, safetensors; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '-'); print('transformers', transformers.__version__)"
python3 -m models.train_nli --config "$config" --out "$work" --bundle "$bundle" \
    --device "${DEVICE:-cuda}" --threads "${THREADS:-16}" "$@" 2>&1 | tee "$out/train.log"
(cd "$work" && sha256sum model.safetensors > "$out/model.safetensors.sha256")
split -b 15M -d "$work/model.safetensors" "$out/model.safetensors.part-"
for f in config.json training_summary.json training_log.jsonl; do  # $OUT carries 8 files at most
    cp "$work/$f" "$out/"
done
ls -la "$out"
