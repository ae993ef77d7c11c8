"""Bad input matrix: every CLI entry point against every kind of bad input.

Entry points: ``source add`` (each format), ``search``, ``decompose``, ``verify``, ``check``
(TEXT, --file, --jsonl), ``runs show``, the eval loaders, the config file, the database file,
the model options. Inputs: empty, whitespace only, a 5 MB text, binary data, invalid UTF-8, a
malformed JSONL line, JSONL with missing or mistyped fields, a CSV with odd quoting, a path
that does not exist, a directory for a file, a corrupt SQLite file, a database from a newer
schema, a missing or truncated model file, a model folder with only a pickle checkpoint.

A case is *handled* when the command exits non-zero but not 1 (1 = unexpected failure),
prints no traceback, prints exactly one line on stderr, that line names the input (and its
line number where there is one), and the stored data is unchanged (``iterdump`` of the
database, or the bytes of a damaged database file, before and after).

    python benchmarks/bad_input.py [--json benchmarks/results/bad_input.json]

The commands run in-process through Typer's test runner (the same code as the installed
``claimscope`` script); tests/test_bad_input.py runs the same matrix.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CLAIMSCOPE_SHARED_DATA", ROOT.parent / "shared" / "data"))
FIVE_MB = 5 * 1024 * 1024


@dataclass(frozen=True)
class Case:
    entry: str  # the entry point, e.g. "source add --format csv"
    kind: str  # the kind of bad input, e.g. "invalid UTF-8"
    args: tuple[str, ...]  # CLI arguments; "{name}" is replaced by the path of input ``name``
    names: tuple[str, ...]  # what the one-line message must contain (the input, its line)
    db: str = "base"  # "base" (an indexed database, compared by iterdump) or a damaged-db input name
    env: tuple[tuple[str, str], ...] = ()

    @property
    def id(self) -> str:
        return f"{self.entry} | {self.kind}"


@dataclass
class Outcome:
    case: str
    exit_code: int
    message: str
    handled: bool
    problems: list[str] = field(default_factory=list)


# ------------------------------------------------------------------ the inputs


def big_text() -> str:
    """A realistic 5 MB text: real Wikipedia summaries, repeated."""
    lines = (DATA / "fixtures" / "wiki_vital_summaries_300.jsonl").read_text(encoding="utf-8").splitlines()
    body = " ".join(json.loads(x)["text"] for x in lines)
    return (body + " ") * (FIVE_MB // len(body.encode("utf-8")) + 1)


def make_inputs(work: Path) -> dict[str, Path]:
    """Write every bad input once into ``work``; returns name → path."""
    p: dict[str, Path] = {}

    def put(name: str, data: bytes | str) -> None:
        path = work / name
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        p[name.split(".")[0]] = path

    good = (DATA / "fixtures" / "scifact_mini_corpus.jsonl").read_text(encoding="utf-8").splitlines()[0]
    put("empty.jsonl", b"")
    put("blank.jsonl", "  \n\t\n   \n")
    put("empty_txt.txt", b"")
    put("blank_txt.txt", " \n\n\t  \n")
    put("empty_csv.csv", b"")
    put("big.txt", big_text())
    put("binary.bin", bytes(range(256)) * 64 + os.urandom(4096))
    put("binary_jsonl.jsonl", bytes(range(256)) * 64)
    put("binary_csv.csv", bytes(range(256)) * 64)
    put("latin1.jsonl", good.encode() + b"\n" + b'{"id": "x", "text": "caf\xe9"}\n')
    put("latin1_txt.txt", b"Caf\xe9 au lait is a drink.\n")
    put("latin1_csv.csv", b"id,title,text\n1,Caf\xe9,Coffee with milk.\n")
    put("malformed.jsonl", good + "\n" + '{"doc_id": 2, "title": "x", "abstract": ["a"]\n')
    put("malformed_check.jsonl", '{"id": "a", "text": "Paris is in France."}\n{"id": "b", "text": \n')
    put("missing.jsonl", '{"id": "d1", "title": "t", "text": "Some text."}\n{"id": "d2", "title": "no text here"}\n')
    put("mistyped.jsonl", '{"id": "d1", "title": "t", "text": "Some text."}\n{"id": "d2", "text": ["a", "list"]}\n')
    put("mistyped_id.jsonl", '{"id": "d1", "text": "Some text."}\n{"id": {"nested": 1}, "text": "More text."}\n')
    put("scifact_missing.jsonl", good + "\n" + '{"doc_id": 2, "title": "x"}\n')
    put("scifact_mistyped.jsonl", good + "\n" + '{"doc_id": 2, "title": "x", "abstract": "not a list"}\n')
    put("check_missing.jsonl", '{"id": "a", "text": "Paris is in France."}\n{"id": "b", "body": "no text"}\n')
    put("check_mistyped.jsonl", '{"id": "a", "text": "Paris is in France."}\n{"id": "b", "text": 42}\n')
    put("check_id_mistyped.jsonl", '{"id": "a", "text": "Paris is in France."}\n{"id": ["b"], "text": "Rome."}\n')
    put("check_notobject.jsonl", '{"id": "a", "text": "Paris is in France."}\n["a", "list"]\n')
    put("odd_quotes.csv", 'id,title,text\n1,"Unclosed title,Some text\n2,Second,More text\n')
    put("odd_fields.csv", 'id,title,text\n1,"A, title",Text one\n2,B,Text "two" here,extra\n')
    put("no_text_column.csv", "id,title,body\n1,A,Body text\n")
    put("nul_csv.csv", "id,title,text\n1,A,Text\x00with a NUL\n")
    put("claims_missing.jsonl", '{"id": 1, "claim": "x"}\n{"id": 2}\n')
    put("claims_mistyped.jsonl", '{"id": 1, "claim": "x"}\n{"id": "two", "claim": "y"}\n')
    put("nli_mistyped.jsonl", '{"premise": "a", "hypothesis": "b", "label": "entailment"}\n'
                              '{"premise": "a", "hypothesis": 3, "label": "neutral"}\n')
    put("nli_badlabel.jsonl", '{"premise": "a", "hypothesis": "b", "label": "maybe"}\n')
    put("fever_missing.jsonl", '{"claim": "a", "evidence": "b", "label": "SUPPORTS"}\n{"claim": "c"}\n')
    put("decomp_malformed.jsonl", "{not json}\n")
    put("acu_malformed.jsonl", '{"claim": "a", "evidence": "b", "stance": "supports"}\n{"claim": "c", \n')
    put("acu_missing.jsonl", '{"claim": "a", "evidence": "b", "stance": "supports"}\n{"claim": "c", "stance": "refutes"}\n')
    put("acu_badstance.jsonl", '{"claim": "a", "evidence": "b", "stance": "supports"}\n'
                               '{"claim": "c", "evidence": "d", "stance": "maybe"}\n')
    put("acu_mistyped.jsonl", '{"claim": "a", "evidence": "b", "stance": "supports"}\n'
                              '{"claim": "c", "evidence": 7, "stance": "refutes"}\n')
    put("config_badmode.toml", 'mode = "telepathy"\n')
    put("config_badprompt.toml", 'hyde_prompt = "poetry"\n')
    put("not_gguf.gguf", b"GGUF-not-really" + os.urandom(64))
    put("config_bad.toml", "db_path = \n")
    put("config_unknown.toml", 'colour = "red"\n')
    put("config_mistyped.toml", 'top_k = "ten"\n')
    put("config_binary.toml", bytes(range(256)))
    put("config_latin1.toml", b'embedder = "caf\xe9"\n')
    put("corrupt.db", b"SQLite format 3\x00" + os.urandom(8192))
    put("garbage.db", b"not a database at all " * 300)
    newer = work / "newer.db"
    conn = sqlite3.connect(newer)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', '999')")
    conn.commit()
    conn.close()
    p["newer"] = newer
    for name in ("dir", "folder_empty"):
        (work / name).mkdir(exist_ok=True)
        p[name] = work / name
    (work / "folder_bad").mkdir(exist_ok=True)
    (work / "folder_bad" / "ok.txt").write_text("A fine document about rivers.", encoding="utf-8")
    (work / "folder_bad" / "bad.txt").write_bytes(b"\xff\xfe\x00broken")
    p["folder_bad"] = work / "folder_bad"
    p["missing_path"] = work / "does-not-exist.jsonl"
    p["good_corpus"] = DATA / "fixtures" / "scifact_mini_corpus.jsonl"
    p["good_claims"] = DATA / "fixtures" / "scifact_mini_claims.jsonl"
    p.update(model_dirs(work))
    return p


def model_dirs(work: Path) -> dict[str, Path]:
    """Model folders that must be refused: only a pickle checkpoint, a truncated safetensors
    file, a config without weights; and a model path that does not exist."""
    from models.nli import EMBEDDED_NLI_DIR

    out = {}
    pickle_only = work / "model_pickle"
    pickle_only.mkdir(exist_ok=True)
    shutil.copy2(EMBEDDED_NLI_DIR / "config.json", pickle_only / "config.json")
    (pickle_only / "pytorch_model.bin").write_bytes(b"PK\x03\x04" + os.urandom(2048))  # a zip = torch's pickle format
    out["model_pickle"] = pickle_only
    truncated = work / "model_truncated"
    truncated.mkdir(exist_ok=True)
    for f in EMBEDDED_NLI_DIR.iterdir():
        if f.is_file() and f.suffix in (".json", ".txt") and f.name != "README.md":
            shutil.copy2(f, truncated / f.name)
    weights = (EMBEDDED_NLI_DIR / "model.safetensors").read_bytes()
    (truncated / "model.safetensors").write_bytes(weights[: len(weights) // 2])
    out["model_truncated"] = truncated
    header_only = work / "model_badheader"
    header_only.mkdir(exist_ok=True)
    shutil.copy2(EMBEDDED_NLI_DIR / "config.json", header_only / "config.json")
    (header_only / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json header}")
    out["model_badheader"] = header_only
    no_weights = work / "model_noweights"
    no_weights.mkdir(exist_ok=True)
    shutil.copy2(EMBEDDED_NLI_DIR / "config.json", no_weights / "config.json")
    out["model_noweights"] = no_weights
    out["model_missing"] = work / "no-such-model"
    return out


# ------------------------------------------------------------------ the matrix


def C(entry: str, kind: str, args: list[str], names: list[str], db: str = "base", env: dict | None = None) -> Case:
    return Case(entry, kind, tuple(args), tuple(names), db, tuple((env or {}).items()))


def cases() -> list[Case]:
    out: list[Case] = []
    add = ["source", "add", "bad"]
    # source add, every format
    for fmt, empty, blank in (("jsonl", "empty", "blank"), ("scifact", "empty", "blank"), ("csv", "empty_csv", None),
                              ("folder", "empty_txt", "blank_txt")):
        e = f"source add --format {fmt}"
        out.append(C(e, "empty input", [*add, f"{{{empty}}}", "--format", fmt], [f"{{{empty}}}"]))
        if blank:
            out.append(C(e, "whitespace only", [*add, f"{{{blank}}}", "--format", fmt], [f"{{{blank}}}"]))
        out.append(C(e, "path does not exist", [*add, "{missing_path}", "--format", fmt], ["{missing_path}"]))
    out += [
        C("source add --format folder", "empty folder", [*add, "{folder_empty}", "--format", "folder"], ["{folder_empty}"]),
        C("source add --format jsonl", "directory for a file", [*add, "{dir}", "--format", "jsonl"], ["{dir}"]),
        C("source add --format csv", "directory for a file", [*add, "{dir}", "--format", "csv"], ["{dir}"]),
        C("source add --format jsonl", "binary data", [*add, "{binary_jsonl}", "--format", "jsonl"], ["{binary_jsonl}"]),
        C("source add --format csv", "binary data", [*add, "{binary_csv}", "--format", "csv"], ["{binary_csv}"]),
        C("source add --format folder", "binary data", [*add, "{binary}", "--format", "folder"], ["{binary}"]),
        C("source add (auto)", "binary data, unknown suffix", [*add, "{binary}"], ["{binary}"]),
        C("source add --format jsonl", "invalid UTF-8", [*add, "{latin1}", "--format", "jsonl"], ["{latin1}"]),
        C("source add --format csv", "invalid UTF-8", [*add, "{latin1_csv}", "--format", "csv"], ["{latin1_csv}"]),
        C("source add --format folder", "invalid UTF-8 file", [*add, "{latin1_txt}", "--format", "folder"], ["{latin1_txt}"]),
        C("source add --format folder", "invalid UTF-8 file in a folder", [*add, "{folder_bad}"], ["bad.txt"]),
        C("source add --format scifact", "malformed JSONL line", [*add, "{malformed}", "--format", "scifact"],
          ["{malformed}", "line 2"]),
        C("source add (auto)", "malformed JSONL line", [*add, "{malformed}"], ["{malformed}", "line 2"]),
        C("source add --format jsonl", "missing field", [*add, "{missing}", "--format", "jsonl"], ["{missing}", "line 2"]),
        C("source add --format jsonl", "mistyped field", [*add, "{mistyped}", "--format", "jsonl"], ["{mistyped}", "line 2"]),
        C("source add --format jsonl", "mistyped id", [*add, "{mistyped_id}", "--format", "jsonl"], ["{mistyped_id}", "line 2"]),
        C("source add --format scifact", "missing field", [*add, "{scifact_missing}", "--format", "scifact"],
          ["{scifact_missing}", "line 2"]),
        C("source add --format scifact", "mistyped field", [*add, "{scifact_mistyped}", "--format", "scifact"],
          ["{scifact_mistyped}", "line 2"]),
        C("source add --format csv", "odd quoting (unclosed quote)", [*add, "{odd_quotes}", "--format", "csv"],
          ["{odd_quotes}"]),
        C("source add --format csv", "odd quoting (extra field)", [*add, "{odd_fields}", "--format", "csv"],
          ["{odd_fields}", "line 3"]),
        C("source add --format csv", "missing text column", [*add, "{no_text_column}", "--format", "csv"],
          ["{no_text_column}"]),
        C("source add --format csv", "NUL byte", [*add, "{nul_csv}", "--format", "csv"], ["{nul_csv}"]),
        C("source add", "embedder: pickle-only folder", [*add, "{good_corpus}"], ["{model_pickle}"],
          env={"CLAIMSCOPE_EMBEDDER": "{model_pickle}"}),
    ]
    # search, decompose, verify: text arguments
    for entry, argv, noun in (("search", ["search"], "query"), ("decompose", ["decompose"], "text"),
                              ("verify", ["verify"], "claim"), ("check TEXT", ["check"], "text")):
        out += [
            C(entry, "empty input", [*argv, ""], [noun]),
            C(entry, "whitespace only", [*argv, " \n\t "], [noun]),
            C(entry, "5 MB text", [*argv, "@big"], [noun]),
        ]
    out.append(C("search", "unknown source", ["search", "rivers", "--source", "nope"], ["nope"]))
    # check --file
    for kind, name in (("empty input", "empty_txt"), ("whitespace only", "blank_txt"), ("5 MB text", "big"),
                       ("binary data", "binary"), ("invalid UTF-8", "latin1_txt"), ("path does not exist", "missing_path"),
                       ("directory for a file", "dir")):
        out.append(C("check --file", kind, ["check", "--file", f"{{{name}}}"], [f"{{{name}}}"]))
    # check --jsonl
    for kind, name, line in (("empty input", "empty", None), ("whitespace only", "blank", None),
                             ("binary data", "binary_jsonl", None), ("invalid UTF-8", "latin1", None),
                             ("malformed JSONL line", "malformed_check", 2), ("missing field", "check_missing", 2),
                             ("mistyped field", "check_mistyped", 2), ("mistyped id", "check_id_mistyped", 2),
                             ("not an object", "check_notobject", 2), ("path does not exist", "missing_path", None),
                             ("directory for a file", "dir", None)):
        out.append(C("check --jsonl", kind, ["check", "--jsonl", f"{{{name}}}"],
                     [f"{{{name}}}"] + ([f"line {line}"] if line else [])))
    # models
    for entry, argv in (("verify --verifier", ["verify", "rivers flow", "--verifier"]),
                        ("check --verifier", ["check", "Rivers flow to the sea.", "--verifier"])):
        for kind, name in (("model path does not exist", "model_missing"), ("pickle-only model folder", "model_pickle"),
                           ("truncated model.safetensors", "model_truncated"),
                           ("damaged safetensors header", "model_badheader"), ("model folder without weights", "model_noweights")):
            out.append(C(entry, kind, [*argv, f"{{{name}}}"], [f"{{{name}}}"]))
    # runs show
    out.append(C("runs show", "unknown run", ["runs", "show", "987654"], ["987654"]))
    # eval loaders
    ev = ["eval", "verifier", "--dataset"]
    out += [
        C("eval verifier (nli)", "empty input", [*ev, "nli", "--path", "{empty}"], ["{empty}"]),
        C("eval verifier (nli)", "binary data", [*ev, "nli", "--path", "{binary_jsonl}"], ["{binary_jsonl}"]),
        C("eval verifier (nli)", "mistyped field", [*ev, "nli", "--path", "{nli_mistyped}"], ["{nli_mistyped}", "line 2"]),
        C("eval verifier (nli)", "unknown label", [*ev, "nli", "--path", "{nli_badlabel}"], ["{nli_badlabel}", "line 1"]),
        C("eval verifier (nli)", "path does not exist", [*ev, "nli", "--path", "{missing_path}"], ["{missing_path}"]),
        C("eval verifier (fever-symmetric)", "missing field", [*ev, "fever-symmetric", "--path", "{fever_missing}"],
          ["{fever_missing}", "line 2"]),
        C("eval verifier (scifact)", "directory for a file",
          [*ev, "scifact", "--path", "{dir}", "--corpus", "{malformed}"], ["{dir}"]),
        C("eval retrieval", "malformed corpus line", ["eval", "retrieval", "--claims", "{good_claims}", "--corpus",
                                                     "{malformed}"], ["{malformed}", "line 2"]),
        C("eval retrieval", "missing claim field", ["eval", "retrieval", "--claims", "{claims_missing}", "--corpus",
                                                   "{good_corpus}"], ["{claims_missing}", "line 2"]),
        C("eval retrieval", "mistyped claim field", ["eval", "retrieval", "--claims", "{claims_mistyped}", "--corpus",
                                                    "{good_corpus}"], ["{claims_mistyped}", "line 2"]),
        C("eval verdicts", "invalid UTF-8", ["eval", "verdicts", "--path", "{latin1}"], ["{latin1}"]),
        C("eval decompose", "malformed JSONL line", ["eval", "decompose", "--dataset", "factscore", "--path",
                                                    "{decomp_malformed}"], ["{decomp_malformed}", "line 1"]),
    ]
    # query expansion, context usage, characteristics (seeds 000 and 001)
    out += [
        C("search --mode", "unknown retrieval mode", ["search", "rivers", "--mode", "telepathy"], ["telepathy"]),
        C("search --mode hyde --prompt", "unknown prompt preset", ["search", "rivers", "--mode", "hyde", "--prompt",
                                                                   "poetry"], ["poetry"]),
        C("search --mode query2doc --llm", "model path does not exist", ["search", "rivers", "--mode", "query2doc",
                                                                         "--llm", "{model_missing}.gguf"],
          ["{model_missing}.gguf"]),
        C("search --mode query2doc --llm", "not a GGUF file", ["search", "rivers", "--mode", "query2doc", "--llm",
                                                               "{not_gguf}"], ["{not_gguf}"]),
        C("acu", "empty claim", ["acu", "", "--evidence", "Rivers flow."], ["claim"]),
        C("acu", "whitespace-only evidence", ["acu", "Rivers flow.", "--evidence", " \n "], ["evidence"]),
        C("acu", "5 MB evidence", ["acu", "Rivers flow.", "--evidence", "@big"], ["evidence"]),
        C("acu", "unknown stance", ["acu", "Rivers flow.", "--evidence", "They do.", "--stance", "maybe"], ["maybe"]),
        C("characteristics", "empty evidence", ["characteristics", "Rivers flow.", "--evidence", ""], ["evidence"]),
    ]
    for kind, name, line in (("empty input", "empty", None), ("binary data", "binary_jsonl", None),
                             ("invalid UTF-8", "latin1", None), ("malformed JSONL line", "acu_malformed", 2),
                             ("missing field", "acu_missing", 2), ("mistyped field", "acu_mistyped", 2),
                             ("unknown stance", "acu_badstance", 2), ("path does not exist", "missing_path", None),
                             ("directory for a file", "dir", None)):
        out.append(C("eval acu", kind, ["eval", "acu", "--data", f"{{{name}}}"],
                     [f"{{{name}}}"] + ([f"line {line}"] if line else [])))
    out += [
        C("eval leakage", "malformed corpus line", ["eval", "leakage", "--claims", "{good_claims}", "--corpus",
                                                   "{malformed}"], ["{malformed}", "line 2"]),
        C("eval leakage", "missing claim field", ["eval", "leakage", "--claims", "{claims_missing}", "--corpus",
                                                 "{good_corpus}"], ["{claims_missing}", "line 2"]),
    ]
    # the config file
    for kind, name in (("malformed TOML", "config_bad"), ("unknown setting", "config_unknown"),
                       ("mistyped setting", "config_mistyped"), ("binary data", "config_binary"),
                       ("invalid UTF-8", "config_latin1"), ("unknown retrieval mode", "config_badmode"),
                       ("unknown HyDE prompt", "config_badprompt"), ("path does not exist", "missing_path"),
                       ("directory for a file", "dir")):
        out.append(C("--config", kind, ["--config", f"{{{name}}}", "source", "list"], [f"{{{name}}}"]))
    out.append(C("CLAIMSCOPE_CONFIG", "mistyped setting", ["source", "list"], ["{config_mistyped}"],
                 env={"CLAIMSCOPE_CONFIG": "{config_mistyped}"}))
    # the database file
    for kind, name in (("corrupt SQLite file", "corrupt"), ("not a database", "garbage"),
                       ("database from a newer schema", "newer")):
        for entry, argv in (("source list", ["source", "list"]), ("runs show", ["runs", "show", "1"]),
                            ("source add", ["source", "add", "bad", "{good_corpus}"])):
            out.append(C(f"--db ({entry})", kind, argv, [f"{{{name}}}"], db=name))
    out.append(C("--db (source list)", "directory for a file", ["source", "list"], ["{dir}"], db="dir"))
    for entry, argv in (("runs show", ["runs", "show", "1"]), ("search", ["search", "mast cells", "--mode", "bm25"])):
        out.append(C(f"--db ({entry})", "truncated SQLite file", argv, ["{truncated_db}"], db="truncated_db"))
    return out


def add_truncated_db(paths: dict[str, Path], base_db: Path, work: Path) -> None:
    """A copy of the indexed database cut to its first quarter (a disk-full or half-copied file)."""
    data = base_db.read_bytes()
    (work / "truncated.db").write_bytes(data[: len(data) // 4])
    paths["truncated_db"] = work / "truncated.db"


# ------------------------------------------------------------------ running a case


def build_base_db(work: Path) -> Path:
    """An indexed database (6 SciFact mini documents) with one finished run."""
    from typer.testing import CliRunner

    from tui.cli import app

    corpus = work / "base_corpus.jsonl"
    corpus.write_text("\n".join((DATA / "fixtures" / "scifact_mini_corpus.jsonl").read_text(encoding="utf-8")
                                .splitlines()[:6]) + "\n", encoding="utf-8")
    db = work / "base.db"
    config = work / "empty-config.toml"  # keeps the user's own config out of the matrix
    config.write_text("", encoding="utf-8")
    runner = CliRunner()
    res = runner.invoke(app, ["--db", str(db), "--config", str(config), "source", "add", "mini", str(corpus)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["--db", str(db), "--config", str(config), "verify",
                              "Mast cells contribute to obesity.", "--source", "mini", "-k", "2"])
    assert res.exit_code == 0, res.output
    return db


def dump(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def fill(text: str, paths: dict[str, Path], big: str) -> str:
    if text == "@big":
        return big
    for name, path in paths.items():
        text = text.replace("{" + name + "}", str(path))
    return text


def run_case(case: Case, paths: dict[str, Path], base_db: Path, runner, big: str) -> Outcome:
    from tui.cli import app

    args = [fill(a, paths, big) for a in case.args]
    env = {k: fill(v, paths, big) for k, v in case.env}
    names = [fill(n, paths, big) for n in case.names]
    db = base_db if case.db == "base" else paths[case.db]
    if "--config" not in args:
        env.setdefault("CLAIMSCOPE_CONFIG", str(base_db.parent / "empty-config.toml"))
    before = dump(db) if case.db == "base" else (db.read_bytes() if db.is_file() else None)
    old_env = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        res = runner.invoke(app, ["--db", str(db), *args])
    finally:
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    message = lines[-1] if lines else ""
    problems = []
    if res.exit_code in (0, 1):
        problems.append(f"exit code {res.exit_code}")
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        problems.append(f"uncaught {type(res.exception).__name__}: {str(res.exception)[:200]}")
    if "Traceback" in res.output:
        problems.append("traceback printed")
    if len(lines) != 1:
        problems.append(f"{len(lines)} lines on stderr")
    missing = [n for n in names if n not in message]
    if missing:
        problems.append(f"message does not name {missing}")
    after = dump(db) if case.db == "base" else (db.read_bytes() if db.is_file() else None)
    if after != before:
        problems.append("stored data changed")
    return Outcome(case.id, res.exit_code, message[:300], not problems, problems)


def run_matrix(work: Path | None = None, log=print) -> dict:
    from typer.testing import CliRunner

    own = work is None
    work = Path(tempfile.mkdtemp(prefix="claimscope-bad-")) if own else work
    try:
        paths = make_inputs(work)
        base = build_base_db(work)
        add_truncated_db(paths, base, work)
        big = paths["big"].read_text(encoding="utf-8")
        runner = CliRunner()
        outcomes = []
        for case in cases():
            o = run_case(case, paths, base, runner, big)
            outcomes.append(o)
            log(f"{'ok  ' if o.handled else 'FAIL'} {o.case:<70} exit {o.exit_code}  "
                f"{o.message[:110] if o.handled else '; '.join(o.problems)}")
        return {"tried": len(outcomes), "handled": sum(o.handled for o in outcomes),
                "entry_points": sorted({c.entry for c in cases()}), "outcomes": [asdict(o) for o in outcomes]}
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", type=Path, help="Write the report here.")
    args = ap.parse_args()
    report = run_matrix()
    print(f"bad inputs tried {report['tried']}, handled {report['handled']}")
    if args.json:
        from crash_harness import write_report  # the script's own folder is on sys.path

        write_report(args.json, report)


if __name__ == "__main__":
    main()
