"""The atomic decomposer's adapter merged into its base at install time (models/atomic_merge.py):
the build is deterministic (the same bytes as the one `make install` built), it is used only
while the recorded hashes of base, adapter and merged file match, and otherwise the runtime
falls back to the base with the adapter applied at load."""

from __future__ import annotations

import json
import shutil

import pytest

from models.atomic import ADAPTER_FILE, RUNTIME_ENV, atomic_ref, load_atomic_llm, messages, parse_answer
from models.atomic_merge import MERGED_DIR, MERGED_FILE, SOURCE_FILE, build, merged_ref
from models.registry import ModelError, weights_sha256

BIO = "Lanny Flaherty is an American actor born on December 18, 1949, in Pensacola, Florida."


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("merged")
    return out, build(out)


def test_the_merge_is_recorded_and_deterministic(built):
    out, record = built
    assert record["adapter_sha256"] == weights_sha256(ADAPTER_FILE)
    assert record["merged_sha256"] == weights_sha256(out / MERGED_FILE)
    assert record["quantisation"] == "Q8_0" and not (out / (MERGED_FILE + ".tmp")).exists()
    # `make install` built the runtime's copy in another process: byte for byte the same model
    if not (MERGED_DIR / SOURCE_FILE).is_file():
        pytest.fail("models/decomposer/merged is not built: run `make install` (python -m models.atomic_merge)")
    installed = json.loads((MERGED_DIR / SOURCE_FILE).read_text())
    if (installed["base_sha256"], installed["adapter_sha256"]) == (record["base_sha256"], record["adapter_sha256"]):
        assert installed["merged_sha256"] == record["merged_sha256"]
    else:
        pytest.fail("models/decomposer/merged is stale: run `make install` (python -m models.atomic_merge)")


def test_only_a_merge_whose_hashes_match_is_used(built, tmp_path, monkeypatch):
    out, record = built
    ref = merged_ref(ADAPTER_FILE, out)
    assert ref is not None and ref.path == out / MERGED_FILE and ref.lora is None
    man = ref.manifest()
    assert man["lora_merged"] and man["lora_sha256"] == record["adapter_sha256"] and man["base_sha256"] == record["base_sha256"]
    monkeypatch.setattr("models.atomic_merge.MERGED_DIR", out)
    assert atomic_ref().path == out / MERGED_FILE  # the default runtime takes it
    lora = atomic_ref(runtime="lora")  # … unless told not to
    assert lora.lora == ADAPTER_FILE and lora.path.name.endswith("Q4_1.gguf")
    monkeypatch.setenv(RUNTIME_ENV, "lora")
    assert atomic_ref().lora == ADAPTER_FILE
    monkeypatch.setenv(RUNTIME_ENV, "fast")
    with pytest.raises(ModelError, match=RUNTIME_ENV):
        atomic_ref()
    monkeypatch.delenv(RUNTIME_ENV)

    def stale(**change) -> object:
        d = tmp_path / "-".join(change)
        d.mkdir()
        (d / MERGED_FILE).symlink_to(out / MERGED_FILE)
        (d / SOURCE_FILE).write_text(json.dumps({**record, **change}))
        monkeypatch.setattr("models.atomic_merge.MERGED_DIR", d)
        return atomic_ref()

    for key in ("adapter_sha256", "base_sha256", "merged_sha256"):  # another adapter, base or merged file
        ref = stale(**{key: "0" * 64})
        assert ref.lora == ADAPTER_FILE and ref.merged_lora is None, key
    other = tmp_path / "other-lora.gguf"
    shutil.copyfile(ADAPTER_FILE, other)
    with open(other, "ab") as fh:
        fh.write(b"\0")
    assert merged_ref(other, out) is None  # a merge of the shipped adapter never serves another one
    monkeypatch.setattr("models.atomic_merge.MERGED_DIR", tmp_path / "nothing-built")
    assert atomic_ref().lora == ADAPTER_FILE


def test_both_runtimes_split_a_compound_bio_sentence(built, monkeypatch):
    """The merged model is another model (Q8_0 rounding of W + BA), so it is checked on its own;
    the fallback must keep working too."""
    out, _ = built
    monkeypatch.setattr("models.atomic_merge.MERGED_DIR", out)
    for runtime in ("merged", "lora"):
        llm = load_atomic_llm(runtime=runtime)
        assert (llm.ref.merged_lora is not None) == (runtime == "merged")
        assert (llm.n_threads, llm.n_threads_batch) == (1, 1)
        facts = parse_answer(llm.generate(messages(BIO, ""), max_tokens=120))
        assert len(facts) >= 3 and any("1949" in f for f in facts) and any("Pensacola" in f for f in facts), (runtime, facts)
