"""A stored run as one self-contained HTML page (``claimscope runs export RUN --format html``
and ctrl+s in the workbench), and a batch page for the runs of a ``check --jsonl`` file.

Why HTML: a reviewer or an editor who does not run a terminal opens the file in any browser
and sees, per claim, its verdict and the evidence sentence that decided it. The page is one
file with inline CSS and inline SVG only: no script, no font, no image or style sheet from the
network, so it reads the same offline, in a mail attachment or in an archive years later.

Every text that came from outside (the answer, claims, evidence, titles, URLs, source names,
configuration values) is untrusted: it goes through :func:`html.escape` and nothing else
reaches the page; a link is kept only when its URL is http(s), so a ``javascript:`` URL in a
source's metadata never becomes a link.

Colours: verdicts are told apart by colour *and* by their written label (colour is never the
only signal); the four backgrounds are distinct for the common colour-vision deficiencies.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Sequence
from itertools import pairwise

import sqlite_utils

from core.errors import NotFoundError
from store import runs as rq
from store.inspect import ClaimView, EvidenceView, JudgementView, claim_view, run_claim_views

VERDICT_LABELS = {
    "supported": "supported",
    "refuted": "refuted",
    "not_enough_info": "not enough info",
    "conflicting": "conflicting",
}
# CSS class per verdict (also the legend's order). "unverified" covers claims not checkable
# or not yet judged.
VERDICT_CLASS = {"supported": "v-sup", "refuted": "v-ref", "not_enough_info": "v-nei", "conflicting": "v-con"}
# When two claims share characters of the answer, the span shows the most serious verdict.
_SEVERITY = ("refuted", "conflicting", "not_enough_info", "supported")

CSS = """
:root { --sup:#c9f0d3; --sup-b:#1e7b3c; --ref:#fbd0cc; --ref-b:#b3261e; --nei:#e4e7eb; --nei-b:#4b5563;
        --con:#fde7a6; --con-b:#8a5a00; --mark:#fff2a8; }
* { box-sizing: border-box; }
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color:#1f2328; margin:0; background:#fff; }
main { max-width: 62rem; margin: 0 auto; padding: 1.5rem 1.25rem 3rem; overflow-wrap: anywhere; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; } h2 { font-size: 1.25rem; margin-top: 2rem;
  border-bottom: 1px solid #d0d7de; padding-bottom: .25rem; } h3 { font-size: 1.05rem; margin: 0 0 .4rem; }
.meta { color:#57606a; font-size: .9rem; }
.answer { font-size: 1.05rem; line-height: 1.9; white-space: pre-wrap; border:1px solid #d0d7de;
  border-radius: 6px; padding: .75rem 1rem; background:#fafbfc; }
.answer a { color: inherit; text-decoration: none; border-bottom: 2px solid; padding: .1rem .05rem; border-radius: 2px; }
.answer sup { font-size: .7rem; color:#57606a; }
.v-sup { background: var(--sup); border-color: var(--sup-b) !important; }
.v-ref { background: var(--ref); border-color: var(--ref-b) !important; }
.v-nei { background: var(--nei); border-color: var(--nei-b) !important; }
.v-con { background: var(--con); border-color: var(--con-b) !important; }
.v-none { background: transparent; border-color: #afb8c1 !important; border-bottom-style: dashed !important; }
.badge { display:inline-block; font-size:.8rem; font-weight:600; padding:.05rem .5rem; border-radius: 1rem;
  border: 1px solid; white-space: nowrap; }
.legend .badge { margin-right: .4rem; }
.claim { border:1px solid #d0d7de; border-left-width: 6px; border-radius: 6px; padding: .75rem 1rem; margin: .9rem 0; }
.claim.v-sup, .claim.v-ref, .claim.v-nei, .claim.v-con, .claim.v-none { background: #fff; }
.claim .row { display:flex; flex-wrap: wrap; gap: .4rem 1rem; align-items: baseline; font-size:.92rem; }
blockquote { margin: .5rem 0; padding: .4rem .8rem; border-left: 3px solid #d0d7de; background:#f6f8fa; }
mark { background: var(--mark); padding: 0 .1rem; border-radius: 2px; box-shadow: inset 0 -2px 0 #d4a72c; }
table { border-collapse: collapse; font-size: .92rem; }
th, td { border: 1px solid #d0d7de; padding: .3rem .55rem; text-align: left; vertical-align: top; }
th { background:#f6f8fa; }
th, td { overflow-wrap: break-word; } /* "anywhere" would let a narrow column wrap letter by letter */
.wide { max-width: 100%; overflow-x: auto; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
code { font-size: .85rem; overflow-wrap: anywhere; }
footer { margin-top: 2.5rem; color:#57606a; font-size:.85rem; }
"""


def _e(value: object) -> str:
    """Escape any value for HTML text or a quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


def _link(url: str | None, text: str) -> str:
    """A link only for http(s) URLs; anything else is shown as escaped text."""
    if url and url.lower().startswith(("http://", "https://")):
        return f'<a href="{_e(url)}" rel="noopener noreferrer">{_e(text)}</a>'
    return _e(text)


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "img-src data:\">"
        f"<title>{_e(title)}</title><style>{CSS}</style></head>\n<body><main>\n{body}\n</main></body></html>\n"
    )


def verdict_class(verdict: str | None) -> str:
    return VERDICT_CLASS.get(verdict or "", "v-none")


def _badge(c: ClaimView) -> str:
    if c.verdict:
        label = VERDICT_LABELS.get(c.verdict, c.verdict)
    elif not c.checkable:
        label = "not checkable"
    else:
        label = c.status
    return f'<span class="badge {verdict_class(c.verdict)}">{_e(label)}</span>'


def _answer(text: str, claims: Sequence[ClaimView]) -> str:
    """The answer with each claim's span a link to the claim, coloured by verdict.

    The text is cut at every span boundary; a piece covered by several claims takes the most
    serious verdict among them (``_SEVERITY``) and lists them all in its tooltip."""
    spans = [(c.span[0], c.span[1], c) for c in claims if c.span and 0 <= c.span[0] < c.span[1] <= len(text)]
    cuts = sorted({0, len(text), *(s for s, _, _ in spans), *(e for _, e, _ in spans)})
    out = []
    for a, b in pairwise(cuts):
        piece = _e(text[a:b])
        cover = [c for s, e, c in spans if s <= a and b <= e]
        if not cover:
            out.append(piece)
            continue
        rank = {v: i for i, v in enumerate(_SEVERITY)}
        top = min(cover, key=lambda c: rank.get(c.verdict or "", len(_SEVERITY)))
        tip = "; ".join(f"claim {c.idx + 1}: {VERDICT_LABELS.get(c.verdict or '', c.verdict or c.status)}"
                        for c in cover)
        ends = "".join(f"<sup>{c.idx + 1}</sup>" for s, e, c in spans if e == b and s <= a)
        out.append(f'<a href="#claim-{top.idx + 1}" class="{verdict_class(top.verdict)}" '
                   f'title="{_e(tip)}">{piece}</a>{ends}')
    return f'<div class="answer">{"".join(out)}</div>'


def _marked(ev: EvidenceView, j: JudgementView | None) -> str:
    """The evidence passage with the deciding sentence(s) in ``<mark>``."""
    if j is None or not ev.sentence_spans:
        return _e(ev.text) if j is None else _e(j.text)
    marks = sorted(ev.sentence_spans[i] for i in j.sentences if 0 <= i < len(ev.sentence_spans))
    if not marks:
        return f"<mark>{_e(j.text)}</mark>"
    out, pos = [], 0
    for s, e in marks:
        s = max(s, pos)
        out += [_e(ev.text[pos:s]), f"<mark>{_e(ev.text[s:e])}</mark>"]
        pos = max(pos, e)
    out.append(_e(ev.text[pos:]))
    return "".join(out)


def _claim_section(c: ClaimView, attribution: dict | None) -> str:
    parts = [f'<section class="claim {verdict_class(c.verdict)}" id="claim-{c.idx + 1}">',
             f"<h3>{c.idx + 1}. {_e(c.text)}</h3>", '<div class="row">', _badge(c)]
    if c.support is not None:
        parts.append(f"<span>support score <b>{c.support:+.2f}</b> (P(entail) − P(contradict))</span>")
    if c.verdict_probs:
        p = c.verdict_probs
        parts.append(f"<span>P(entail) {p[0]:.2f} · P(neutral) {p[1]:.2f} · P(contradict) {p[2]:.2f}</span>")
    if attribution and c.idx in attribution:
        a = attribution[c.idx]
        cites = ", ".join(f"[{n}]" for n in a.get("citations", []))
        parts.append(f'<span>attribution: <b>{_e(a.get("label"))}</b> {_e(cites)}</span>')
    if c.human_label or c.human_judgement:
        parts.append(f"<span>reviewer: {_e(c.human_label or c.human_judgement)}</span>")
    parts.append("</div>")
    if not c.checkable and c.note:
        parts.append(f'<p class="meta">not checked: {_e(c.note)}</p>')
    deciding = next(((e, j) for e in c.evidence for j in e.judgements if j.id == c.deciding_judgement_id), None)
    if deciding is not None:
        ev, j = deciding
        parts.append(f"<blockquote>{_marked(ev, j)}</blockquote>")
        source = f"{ev.source}:{ev.doc_id}"
        date = f" · {_e(ev.date)}" if ev.date else ""
        parts.append(f'<div class="meta">deciding evidence: {_link(ev.url, ev.title or source)} · '
                     f"source <code>{_e(source)}</code>{date} · rank {ev.rank}"
                     + (f" · <code>{_e(ev.url)}</code>" if ev.url else "") + "</div>")
    elif c.checkable and c.verdict:
        parts.append('<p class="meta">no evidence passage decided this verdict.</p>')
    parts.append("</section>")
    return "\n".join(parts)


def _fmt(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float) else _e(value)


def _scores(scores: dict, claims: Sequence[ClaimView]) -> str:
    out = ['<h2 id="scores">Scores</h2>']
    fp = scores.get("factual_precision")
    rows = []
    if fp is not None:
        rows.append(("factual precision (FActScore-style): share of verified claims that are supported",
                     fp["value"]))
    for kind, s in sorted(scores.items()):
        if kind not in ("factual_precision", "icat", "attribution", "structured"):
            rows.append((kind.replace("_", " "), s["value"]))
    icat = (scores.get("icat") or {}).get("detail")
    if icat:
        rows.append((f"ICAT (Samarinas et al., Beyond Factual Accuracy), β = {icat.get('beta', 1.0)}: factuality and "
                     "coverage of the topic's aspects", icat.get("icat")))
        rows.append(("ICAT coverage: share of aspects covered by a supported claim", icat.get("coverage")))
    attribution = (scores.get("attribution") or {}).get("detail")
    if attribution:
        rows.append(("AutoAIS: attribution of cited sentences (ExpertQA, Malaviya et al.)", attribution.get("score")))
    structured = scores.get("structured")
    if structured:
        rows.append(("unsupported lead statements (PeopleProfiles)", structured["value"]))
    if rows:
        out.append("<table><tr><th>score</th><th>value</th></tr>")
        out += [f'<tr><td>{_e(k)}</td><td class="num">{_fmt(v) if v is not None else "—"}</td></tr>' for k, v in rows]
        out.append("</table>")
    counts = {}
    for c in claims:
        key = c.verdict or ("not checkable" if not c.checkable else c.status)
        counts[key] = counts.get(key, 0) + 1
    out.append('<p class="legend">' + " ".join(
        f'<span class="badge {verdict_class(k)}">{_e(VERDICT_LABELS.get(k, k))} {n}</span>'
        for k, n in counts.items()) + "</p>")
    if icat:
        out.append(_coverage(icat, claims))
    if attribution:
        labels = attribution.get("labels") or {}
        out.append("<h3>Attribution labels</h3><p>" + " · ".join(f"{_e(k)}: {_e(v)}" for k, v in labels.items()) + "</p>")
    return "\n".join(out)


def _coverage(icat: dict, claims: Sequence[ClaimView]) -> str:
    """ICAT's coverage matrix: aspects × claims; ● aligned and supported (counts for
    coverage), ○ aligned but not supported (Samarinas et al., "Beyond Factual Accuracy", §5;
    code comments: seed 004 §5)."""
    aspects = icat.get("aspects") or []
    alignment = {int(k): set(v) for k, v in ((icat.get("alignment") or {}).get("claim_aspects") or {}).items()}
    shown = [c for c in claims if c.checkable and c.verdict]
    head = "".join(f'<th title="{_e(c.text)}">{c.idx + 1}</th>' for c in shown)
    rows = []
    for a in aspects:
        cells = []
        for c in shown:
            hit = a.get("id") in alignment.get(c.idx, set())
            mark = ("●" if c.verdict == "supported" else "○") if hit else ""
            cells.append(f'<td class="num">{mark}</td>')
        rows.append(f"<tr><td>{_e(a.get('id'))}. {_e(a.get('text'))}</td>{''.join(cells)}</tr>")
    gaps = ", ".join(str(g) for g in icat.get("gaps") or []) or "none"
    return ('<h3>Coverage matrix (ICAT)</h3><p class="meta">● aligned and supported (counts for coverage) · '
            f'○ aligned, not supported · aspects no supported claim covers: {_e(gaps)}</p>'
            f'<div class="wide"><table><tr><th>aspect \\ claim</th>{head}</tr>{"".join(rows)}</table></div>')


def _manifest(db: sqlite_utils.Database, run_id: int, config: dict) -> str:
    rows = db.execute(
        "SELECT role, model_id, sha256, quantisation, thresholds FROM model_manifest WHERE run_id = ? ORDER BY id",
        [run_id]).fetchall()
    out = ['<h2 id="manifest">Run manifest</h2>', "<h3>Models</h3>"]
    if rows:
        out.append("<table><tr><th>role</th><th>model</th><th>sha256</th><th>quantisation</th></tr>")
        for role, model_id, sha, quant, _ in rows:
            out.append(f"<tr><td>{_e(role)}</td><td><code>{_e(model_id)}</code></td>"
                       f"<td><code>{_e(sha[:16] + '…' if sha else '—')}</code></td><td>{_e(quant or '')}</td></tr>")
        out.append("</table>")
    else:
        out.append('<p class="meta">no model manifest was stored with this run.</p>')
    thresholds = next((json.loads(t) for *_, t in rows if t), None)
    if thresholds:
        out.append("<h3>Thresholds</h3><table>" + "".join(
            f"<tr><td>{_e(k)}</td><td class=\"num\">{_fmt(v)}</td></tr>" for k, v in sorted(thresholds.items()))
            + "</table>")
    sources = config.get("sources")
    if sources:
        out.append("<h3>Sources</h3><p>" + ", ".join(f"<code>{_e(s)}</code>" for s in sources) + "</p>")
    out.append("<h3>Configuration</h3><table>" + "".join(
        f"<tr><td>{_e(k)}</td><td><code>{_e(json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v)}"
        "</code></td></tr>" for k, v in sorted(config.items())) + "</table>")
    return "\n".join(out)


def run_html(db: sqlite_utils.Database, run_id: int) -> str:
    """The whole report of one stored run (no model is run)."""
    run = rq.get_run(db, run_id)
    if run is None:
        raise NotFoundError(f"no run {run_id}")
    claims = [claim_view(db, c.id) for c in run_claim_views(db, run_id)]
    scores = rq.run_scores(db, run_id)
    attribution = (scores.get("attribution") or {}).get("detail")
    by_idx = {a["idx"]: a for a in (attribution or {}).get("claims", [])}
    title = f"claimscope run {run_id}" + (f" · {run.external_id}" if run.external_id else "")
    legend = " ".join(f'<span class="badge {cls}">{_e(VERDICT_LABELS[v])}</span>' for v, cls in VERDICT_CLASS.items())
    body = [
        f"<h1>{_e(title)}</h1>",
        f'<p class="meta">created {_e(run.created_at)} · status {_e(run.status)} · {len(claims)} claims</p>',
        '<h2 id="answer">Answer</h2>', f'<p class="legend">{legend}</p>', _answer(run.input_text, claims),
        _scores(scores, claims),
        '<h2 id="claims">Claims</h2>', *(_claim_section(c, by_idx) for c in claims),
        _manifest(db, run_id, run.config),
        "<footer>Written by claimscope from the stored run; verdicts come from local models and can be wrong. "
        "The highlighted sentence is the one that decided the verdict.</footer>",
    ]
    return _page(title, "\n".join(body))


# ------------------------------------------------------------------ batch


def histogram_svg(values: Sequence[float], bins: int = 10, width: int = 640, height: int = 220,
                  label: str = "factual precision") -> str:
    """An inline SVG bar chart of ``values`` in [0, 1] over ``bins`` equal bins (the last bin
    closed on the right, so a precision of exactly 1.0 is counted)."""
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, max(0, int(v * bins)))] += 1
    top = max(counts, default=0) or 1
    left, bottom, right, head = 36, 34, 8, 16
    w, h = width - left - right, height - bottom - head
    bw = w / bins
    bars = []
    for i, n in enumerate(counts):
        bh = h * n / top
        x, y = left + i * bw, head + h - bh
        bars.append(f'<rect x="{x + 2:.1f}" y="{y:.1f}" width="{bw - 4:.1f}" height="{bh:.1f}" fill="#2f6fb3">'
                    f"<title>{i / bins:.1f}–{(i + 1) / bins:.1f}: {n}</title></rect>")
        if n:
            bars.append(f'<text x="{x + bw / 2:.1f}" y="{y - 3:.1f}" text-anchor="middle" font-size="11">{n}</text>')
    ticks = "".join(
        f'<text x="{left + i * bw:.1f}" y="{head + h + 15}" text-anchor="middle" font-size="11">{i / bins:.1f}</text>'
        for i in range(0, bins + 1, 2))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {width} {height}" '
            f'style="max-width:100%;height:auto" aria-label="histogram of {_e(label)}">'
            f'<line x1="{left}" y1="{head + h}" x2="{left + w}" y2="{head + h}" stroke="#57606a"/>'
            f'<line x1="{left}" y1="{head}" x2="{left}" y2="{head + h}" stroke="#57606a"/>'
            f'<text x="{left - 6}" y="{head + 4}" text-anchor="end" font-size="11">{top}</text>'
            f'<text x="{left - 6}" y="{head + h}" text-anchor="end" font-size="11">0</text>'
            f"{''.join(bars)}{ticks}"
            f'<text x="{left + w / 2:.1f}" y="{height - 4}" text-anchor="middle" font-size="12">{_e(label)}</text>'
            "</svg>")


def batch_html(db: sqlite_utils.Database, run_ids: Sequence[int], link_of: Callable[[int], str]) -> str:
    """One page for a batch of runs (e.g. the runs of one ``check --jsonl`` file): the
    distribution of per-answer factual precision and a row per run linking to its own report
    (``link_of(run_id)``, a relative file name written next to this page)."""
    rows, values = [], []
    for rid in run_ids:
        run = rq.get_run(db, rid)
        if run is None:
            raise NotFoundError(f"no run {rid}")
        fp = (rq.run_scores(db, rid).get("factual_precision") or {}).get("value")
        claims = rq.run_claims(db, rid)
        counts = {v: sum(c.verdict == v for c in claims) for v in VERDICT_CLASS}
        if fp is not None:
            values.append(fp)
        preview = " ".join(run.input_text.split())[:90]
        rows.append(
            f'<tr><td><a href="{_e(link_of(rid))}">run {rid}</a></td><td>{_e(run.external_id or "")}</td>'
            f'<td class="num">{"—" if fp is None else f"{fp:.2f}"}</td><td class="num">{len(claims)}</td>'
            + "".join(f'<td class="num">{counts[v]}</td>' for v in VERDICT_CLASS)
            + f"<td>{_e(preview)}</td></tr>")
    mean = sum(values) / len(values) if values else None
    head = "".join(f'<th><span class="badge {cls}">{_e(VERDICT_LABELS[v])}</span></th>' for v, cls in VERDICT_CLASS.items())
    body = [
        f"<h1>claimscope batch · {len(run_ids)} answers</h1>",
        f'<p class="meta">mean factual precision {"—" if mean is None else f"{mean:.3f}"} over {len(values)} '
        "answers with a verified claim. Each run's own report is a file next to this one.</p>",
        '<h2 id="distribution">Per-answer factual precision</h2>', histogram_svg(values),
        '<h2 id="runs">Runs</h2>',
        f'<div class="wide"><table><tr><th>report</th><th>id</th><th>precision</th><th>claims</th>{head}'
        f"<th>answer</th></tr>{''.join(rows)}</table></div>",
    ]
    return _page(f"claimscope batch of {len(run_ids)} runs", "\n".join(body))
