"""Greedy calls decoded together: several prompts as parallel sequences of one llama.cpp context.

Why: a decoded token of a small model on a CPU is one pass over all its weights for a single row
of activations; the next row costs a fraction of that. The ``atomic`` decomposer makes one
independent call per sentence of an answer (each prompt holds its sentence and context from the
answer's text, never another call's output), so one step can decode a token for every sentence
still writing. Measured on 20 FActScore answers (docs/benchmarks.md, issue 17, "Batched
decoding"), the calls took about 0.7 of the time one by one took, with the same answers.

The answers must be the ones :meth:`models.llm.LLM.generate` gives one by one, token for token:
- each sequence has its own cache stream (``kv_unified = false``), so its attention reads only
  its own cells, at the same slots as in a context of its own;
- prompts are evaluated per sequence in the runtime's 32-token blocks counted from the first
  token, whole blocks shared with an earlier prompt copied from its cells (as ``LLM._prefill``
  reuses the previous call's blocks);
- what remains shared is a decode step's weight products over several rows at once. Whether a
  row's numbers are then those of a lone row is the CPU kernels' property, not a guarantee
  (docs/architecture.md, "Reproducibility"): :meth:`BatchedGreedy.invariant` checks it on this
  machine before anything is decoded together, against the sequential context's own logits, and
  records the outcome per machine, build and model; where it fails,
  :meth:`models.llm.LLM.generate_many` decodes one by one.
- stopping follows ``create_completion``'s streaming loop: an end-of-generation token, the
  ``stop_when`` test on the text before the token just chosen, or ``max_tokens``.

Greedy only: no sampling, grammar, logits processor or stop strings (callers that need those use
``LLM.generate``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from models.registry import ModelError

# Cells of one sequence's cache stream: a sentence's prompt (~80-300 tokens) and its answer
# (<= 160); a call that needs more gets a context sized for it (BatchedGreedy.fits).
CTX_SEQ = 512
# The check's own prompt: its first tokens, then one more as a decode step (what it checks is
# the products over rows, not the prompt; a short one keeps the check cheap).
CHECK_PREFIX = 8
# Where the check's outcome is recorded, per machine and build (CLAIMSCOPE_CACHE_DIR, else the
# user cache directory), so that a process does not pay for it again.
CACHE_ENV = "CLAIMSCOPE_CACHE_DIR"


def answer_room(prompt: Sequence[int], max_tokens: int, n_ctx: int) -> int:
    """The most tokens an answer to ``prompt`` may have, as ``LLM.generate`` cuts ``max_tokens``."""
    return min(max_tokens, n_ctx - len(prompt))


def stream_cells(prompts: Sequence[Sequence[int]], max_tokens: int, n_ctx: int) -> int:
    """The cache cells one stream needs for the longest of these prompts with its answer."""
    return max(len(p) + answer_room(p, max_tokens, n_ctx) for p in prompts)


class BatchedGreedy:
    """Greedy decoding of up to ``n_seq`` prompts at a time over an :class:`models.llm.LLM`'s
    loaded weights, in a llama.cpp context of its own (one cache stream per sequence)."""

    def __init__(self, llm, n_seq: int = 8, n_ctx_seq: int = CTX_SEQ) -> None:
        import llama_cpp

        self._L = llama_cpp
        self.llm = llm
        self.n_seq = max(1, n_seq)
        self.block = llm.prompt_block
        self.n_ctx_seq = min(n_ctx_seq, llm.n_ctx)
        base = llm.llama
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = self.n_ctx_seq * self.n_seq
        params.n_batch = params.n_ubatch = max(self.block, self.n_seq)
        params.n_seq_max = self.n_seq
        params.kv_unified = False
        params.n_threads = llm.n_threads
        params.n_threads_batch = llm.n_threads_batch
        params.flash_attn_type = base.context_params.flash_attn_type
        params.no_perf = True
        self._ctx = llama_cpp.llama_init_from_model(base.model, params)
        if not self._ctx:
            raise ModelError(f"could not create a batched context for {llm.ref.model_id}")
        if base._lora_adapter is not None:  # the adapter llama-cpp-python applied to its own context
            import ctypes

            adapters = (llama_cpp.llama_adapter_lora_p_ctypes * 1)(base._lora_adapter)
            scales = (ctypes.c_float * 1)(base.lora_scale)
            if llama_cpp.llama_set_adapters_lora(self._ctx, adapters, 1, scales):
                llama_cpp.llama_free(self._ctx)
                self._ctx = None
                raise ModelError(f"could not apply the LoRA adapter to a batched context for {llm.ref.model_id}")
        self._mem = llama_cpp.llama_get_memory(self._ctx)
        self._vocab = llama_cpp.llama_model_get_vocab(base.model)
        self._n_vocab = base.n_vocab()
        self._batch = llama_cpp.llama_batch_init(max(self.block, self.n_seq), 0, self.n_seq)
        self._invariant: bool | None = None
        self.shared_tokens = 0  # prompt tokens copied from another sequence's cells, last call

    def close(self) -> None:
        if getattr(self, "_ctx", None):
            self._L.llama_batch_free(self._batch)
            self._L.llama_free(self._ctx)
            self._ctx = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter shutdown the library may be gone already
            self.close()

    # -- llama.cpp calls ---------------------------------------------------------------
    def _decode(self, rows: Sequence[tuple[int, int, int, bool]]) -> None:
        """One ``llama_decode`` of (token, position, sequence, wants logits) rows."""
        b = self._batch
        b.n_tokens = len(rows)
        for i, (tok, pos, seq, logits) in enumerate(rows):
            b.token[i] = tok
            b.pos[i] = pos
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = seq
            b.logits[i] = logits
        rc = self._L.llama_decode(self._ctx, b)
        if rc != 0:
            raise ModelError(f"llama_decode returned {rc} in a batched call of {self.llm.ref.model_id}")

    def _logits(self, i: int) -> np.ndarray:
        ptr = self._L.llama_get_logits_ith(self._ctx, i)
        return np.ctypeslib.as_array(ptr, shape=(self._n_vocab,))

    def _prompt(self, seq: int, tokens: list[int], done: dict[int, list[int]]) -> None:
        """Evaluate ``tokens`` into the empty stream ``seq``: whole blocks shared with a prompt
        already in another stream are copied from it, the rest evaluated in blocks counted from
        the first token; the last token's logits are left in the context (output row 0)."""
        keep, src = 0, -1
        for other, toks in done.items():
            k = next((j for j, (a, b) in enumerate(zip(toks, tokens[:-1], strict=False)) if a != b), min(len(toks), len(tokens) - 1))
            k -= k % self.block
            if k > keep:
                keep, src = k, other
        if keep:
            # across streams llama.cpp copies a whole stream; the cells past the shared blocks go
            self._L.llama_memory_seq_cp(self._mem, src, seq, -1, -1)
            self._L.llama_memory_seq_rm(self._mem, seq, keep, -1)
            self.shared_tokens += keep
        for start in range(keep, len(tokens), self.block):
            chunk = tokens[start : start + self.block]
            last = start + len(chunk) == len(tokens)
            self._decode([(t, start + j, seq, last and j == len(chunk) - 1) for j, t in enumerate(chunk)])

    # -- the check ---------------------------------------------------------------------
    def invariant(self, tokens: list[int]) -> bool:
        """Whether a decode step gives a sequence, beside others, the logits the model's own
        sequential context gives it alone (bit for bit): the first ``CHECK_PREFIX`` tokens of
        ``tokens``, then the next one decoded alone in the sequential context (as
        ``create_completion`` decodes), and here with every row count from 1 to ``n_seq``. Read
        from the record of an earlier check on this machine, model, build and thread count when
        there is one (:meth:`_record`); else measured (about 0.5 s) and recorded."""
        if self._invariant is not None:
            return self._invariant
        machine = self._machine()
        record = self._record(machine)
        if record is not None and record.is_file():
            try:
                self._invariant = bool(json.loads(record.read_text(encoding="utf-8"))["invariant"])
                return self._invariant
            except (OSError, ValueError, KeyError, TypeError):
                pass  # unreadable: measure again
        if len(tokens) <= CHECK_PREFIX:
            return False  # too short to check; asked again with the next call's prompt
        probe = tokens[: CHECK_PREFIX + 1]
        llama = self.llm.llama
        llama.reset()
        llama.eval(probe[:-1])
        llama.eval(probe[-1:])  # one row: a decode step of LLM.generate
        ref = np.ctypeslib.as_array(self._L.llama_get_logits_ith(llama.ctx, -1), shape=(self._n_vocab,)).copy()
        llama.reset()
        self._L.llama_memory_clear(self._mem, True)
        self._decode([(t, j, 0, False) for j, t in enumerate(probe[:-1])])
        for s in range(1, self.n_seq):
            self._L.llama_memory_seq_cp(self._mem, 0, s, -1, -1)
        ok = True
        for k in range(1, self.n_seq + 1):
            for s in range(self.n_seq):
                self._L.llama_memory_seq_rm(self._mem, s, CHECK_PREFIX, -1)
            self._decode([(probe[-1], CHECK_PREFIX, s, True) for s in range(k)])
            ok = ok and all(np.array_equal(self._logits(i), ref) for i in range(k))
        self._L.llama_memory_clear(self._mem, True)
        self._invariant = ok
        if record is not None:
            try:
                record.parent.mkdir(parents=True, exist_ok=True)
                tmp = record.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps({"invariant": ok, **machine}, indent=1) + "\n", encoding="utf-8")
                tmp.replace(record)
            except OSError:
                pass  # not writable: the next process checks again
        return ok

    def _machine(self) -> dict:
        """What the check's outcome depends on: the CPU (model name and flags), the llama.cpp
        build (its libraries' sizes and times), the weights (and adapter) files, the thread
        counts, how many rows decode together and the size of a stream."""
        import llama_cpp

        cpu = ""
        try:
            info = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
            cpu = "\n".join(sorted({ln for ln in info.splitlines() if ln.startswith(("model name", "flags"))}))
        except OSError:
            cpu = platform.processor()

        def stamp(p: Path) -> list:
            st = p.stat()
            return [str(p), st.st_size, st.st_mtime_ns]

        libs = sorted(Path(llama_cpp.__file__).parent.rglob("*.so*")) + sorted(Path(llama_cpp.__file__).parent.rglob("*.dylib"))
        ref = self.llm.ref
        return {
            "cpu_sha256": hashlib.sha256(cpu.encode()).hexdigest(), "machine": platform.machine(),
            "llama_cpp": llama_cpp.__version__, "libraries": [stamp(p) for p in libs],
            "model": stamp(Path(ref.path)), "lora": stamp(Path(ref.lora)) if ref.lora else None,
            "threads": [self.llm.n_threads, self.llm.n_threads_batch], "n_seq": self.n_seq,
            "prompt_block": self.block, "n_ctx_seq": self.n_ctx_seq, "check": "v1",
        }

    def _record(self, machine: dict | None = None) -> Path | None:
        """The file that records the check for ``machine`` (default: this one's, :meth:`_machine`);
        None where it cannot be named."""
        try:
            root = os.environ.get(CACHE_ENV)
            if not root:
                from platformdirs import user_cache_dir

                root = user_cache_dir("claimscope")
            key = hashlib.sha256(json.dumps(machine or self._machine(), sort_keys=True).encode()).hexdigest()[:20]
        except (OSError, ImportError):
            return None
        return Path(root) / "llm-batch" / f"{key}.json"

    # -- generation --------------------------------------------------------------------
    def generate(self, prompts: Sequence[list[int]], max_tokens: int,
                 stop_when: Callable[[str], bool] | None = None) -> list[str]:
        """The greedy answer text of each prompt (token ids of rendered chats), in order. Up to
        ``n_seq`` decode together; a stream that finishes takes the next prompt waiting."""
        limit = [answer_room(p, max_tokens, self.llm.n_ctx) for p in prompts]
        if not self.fits(prompts, max_tokens):
            raise ValueError("a prompt and its answer do not fit a stream of this context; see fits()")
        self._L.llama_memory_clear(self._mem, True)
        self.shared_tokens = 0
        outs: list[list[int]] = [[] for _ in prompts]
        waiting = deque(range(len(prompts)))
        live: dict[int, int] = {}  # stream -> prompt index
        in_stream: dict[int, list[int]] = {}  # stream -> the prompt whose cells it holds
        free = list(range(self.n_seq))[::-1]
        while waiting or live:
            while waiting and free:  # fill free streams; each joins with its first token
                p, s = waiting.popleft(), free.pop()
                self._L.llama_memory_seq_rm(self._mem, s, -1, -1)
                in_stream.pop(s, None)
                self._prompt(s, list(prompts[p]), in_stream)
                in_stream[s] = list(prompts[p])
                if self._take(p, int(np.argmax(self._logits(-1))), outs, prompts, limit, stop_when):
                    live[s] = p
                else:
                    free.append(s)
            if not live:
                continue
            order = list(live.items())
            self._decode([(outs[p][-1], len(prompts[p]) + len(outs[p]) - 1, s, True) for s, p in order])
            for i, (s, p) in enumerate(order):
                if not self._take(p, int(np.argmax(self._logits(i))), outs, prompts, limit, stop_when):
                    del live[s]
                    free.append(s)
        return [self._text(o, p) for o, p in zip(outs, prompts, strict=True)]

    def fits(self, prompts: Sequence[list[int]], max_tokens: int) -> bool:
        """Whether every prompt and its longest answer fit one stream of this context."""
        return stream_cells(prompts, max_tokens, self.llm.n_ctx) <= self.n_ctx_seq

    def _text(self, out: list[int], prompt: Sequence[int]) -> str:
        return self.llm.llama.detokenize(out, prev_tokens=list(prompt)).decode("utf-8", errors="ignore")

    def _take(self, p: int, tok: int, outs, prompts, limit, stop_when) -> bool:
        """Append ``tok`` to answer ``p`` unless the answer ends here; True while it goes on."""
        if stop_when is not None and stop_when(self._text(outs[p], prompts[p])):
            return False
        if self._L.llama_vocab_is_eog(self._vocab, tok):
            return False
        outs[p].append(tok)
        return len(outs[p]) < limit[p]
