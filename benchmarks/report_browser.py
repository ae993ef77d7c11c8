"""Open a run's HTML report in a real browser (Debian's headless Chromium) and check what a
reader sees: every claim is on the page, the four verdict colours are distinct (as computed
by the browser, and as pixels in the screenshot), and nothing overflows horizontally at
1280 px. Keeps the screenshot (the README shows docs/report.png).

    python benchmarks/report_browser.py                       # the demo run, in a fresh temp database
    python benchmarks/report_browser.py --db D.db --run 3     # a stored run
    python benchmarks/report_browser.py --screenshot docs/report.png

Without the Chrome DevTools protocol: the page is opened twice from file:// URLs, once with
``--screenshot`` and once with ``--dump-dom`` on a probe copy, a copy with a tiny inline
script appended that writes the browser's measurements (scrollWidth, computed colours,
claim count) into a ``<pre id="probe">`` the dumped DOM carries back. The report itself
stays script-free; its Content-Security-Policy is relaxed in the probe copy only.

Chromium: ``apt-get install -y chromium`` (Debian; ``make test`` does this when run as root).
Another binary: env CLAIMSCOPE_CHROMIUM. Results: benchmarks/results/report_browser.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

WIDTH = 1280
VERDICT_CLASSES = ("v-sup", "v-ref", "v-nei", "v-con")

PROBE = """<script>
(function () {
  var d = document.documentElement, out = {};
  out.scrollWidth = d.scrollWidth; out.clientWidth = d.clientWidth; out.innerWidth = window.innerWidth;
  out.claims = Array.prototype.map.call(document.querySelectorAll('section.claim h3'),
                                        function (h) { return h.textContent; });
  out.colours = {};
  ['v-sup', 'v-ref', 'v-nei', 'v-con'].forEach(function (c) {
    var el = document.querySelector('.legend .' + c);
    out.colours[c] = el ? getComputedStyle(el).backgroundColor : null;
  });
  out.spans = Array.prototype.map.call(document.querySelectorAll('.answer a'), function (a) {
    return [a.className, getComputedStyle(a).backgroundColor];
  });
  out.wide = Array.prototype.filter.call(document.querySelectorAll('main *'), function (el) {
    var r = el.getBoundingClientRect(); return r.right > d.clientWidth + 0.5;
  }).map(function (el) { return el.tagName + '.' + el.className; }).slice(0, 10);
  var pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def chromium() -> str | None:
    """The Chromium binary: env CLAIMSCOPE_CHROMIUM, else the first of the usual names on PATH."""
    env = os.environ.get("CLAIMSCOPE_CHROMIUM")
    if env:
        return env
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


def _run_browser(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    binary = chromium()
    if binary is None:
        raise RuntimeError("no Chromium found: apt-get install -y chromium (or set CLAIMSCOPE_CHROMIUM)")
    with tempfile.TemporaryDirectory(prefix="claimscope-chromium-") as profile:
        cmd = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--no-first-run", "--hide-scrollbars", f"--user-data-dir={profile}", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def probe(page: Path, width: int = WIDTH, height: int = 900) -> dict:
    """The browser's measurements of ``page`` at ``width`` px (see the module docstring)."""
    html = page.read_text(encoding="utf-8")
    html = re.sub(r"<meta http-equiv=\"Content-Security-Policy\"[^>]*>", "", html, count=1)
    html = html.replace("</body>", PROBE + "</body>", 1)
    with tempfile.TemporaryDirectory(prefix="claimscope-probe-") as tmp:
        copy = Path(tmp) / "probe.html"
        copy.write_text(html, encoding="utf-8")
        res = _run_browser([f"--window-size={width},{height}", "--dump-dom", copy.as_uri()])
    m = re.search(r'<pre id="probe">(.*?)</pre>', res.stdout, re.S)
    if m is None:
        raise RuntimeError(f"the browser returned no probe (exit {res.returncode}): {res.stderr[-500:]}")
    import html as html_mod

    return json.loads(html_mod.unescape(m.group(1)))


def screenshot(page: Path, png: Path, width: int = WIDTH, height: int = 1000) -> Path:
    """A PNG of the page as the browser draws it, ``width`` × ``height`` px."""
    png.parent.mkdir(parents=True, exist_ok=True)
    res = _run_browser([f"--window-size={width},{height}", f"--screenshot={png.resolve()}", page.resolve().as_uri()])
    if not png.exists():
        raise RuntimeError(f"no screenshot written (exit {res.returncode}): {res.stderr[-500:]}")
    return png


def png_pixels(png: Path) -> tuple[int, int, set[tuple[int, int, int]]]:
    """(width, height, the set of RGB colours) of an 8-bit RGB/RGBA, non-interlaced PNG —
    what Chromium writes — decoded with zlib alone (no imaging library is needed)."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        (n,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {ctype}, interlace {interlace})")
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    prev, colours, off = bytearray(stride), set(), 0
    for _ in range(h):
        ftype, line = raw[off], bytearray(raw[off + 1:off + 1 + stride])
        off += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        colours.update(tuple(line[i:i + 3]) for i in range(0, stride, bpp))
        prev = line
    return w, h, colours


def rgb(css: str) -> tuple[int, int, int]:
    """``rgb(1, 2, 3)`` → (1, 2, 3)."""
    return tuple(int(x) for x in re.findall(r"\d+", css)[:3])


def check(page: Path, png: Path, claims: list[str]) -> dict:
    """Everything a reader must see, as a dict of findings; ``problems`` lists what failed."""
    t0 = time.perf_counter()
    found = probe(page)
    screenshot(page, png)
    w, h, pixels = png_pixels(png)
    colours = {k: v and rgb(v) for k, v in found["colours"].items()}
    shown = {cls: rgb(bg) for cls, bg in found["spans"] if cls in VERDICT_CLASSES}
    problems = []
    missing = [c for c in claims if not any(c in h3 for h3 in found["claims"])]
    if missing:
        problems.append(f"claims not on the page: {missing}")
    if None in colours.values() or len(set(colours.values())) != len(VERDICT_CLASSES):
        problems.append(f"verdict colours not distinct: {colours}")
    if found["scrollWidth"] > found["clientWidth"]:
        problems.append(f"horizontal overflow at {WIDTH}px: scrollWidth {found['scrollWidth']} > "
                        f"{found['clientWidth']} ({found['wide']})")
    unseen = {cls: c for cls, c in shown.items() if c not in pixels}
    if unseen:
        problems.append(f"answer span colours not in the screenshot: {unseen}")
    return {"width": WIDTH, "scroll_width": found["scrollWidth"], "client_width": found["clientWidth"],
            "claims_on_page": len(found["claims"]), "claims_expected": len(claims), "colours": colours,
            "answer_span_colours": shown, "screenshot": str(png), "screenshot_px": [w, h],
            "screenshot_bytes": png.stat().st_size, "seconds": round(time.perf_counter() - t0, 2),
            "problems": problems}


def _demo_db(folder: Path) -> tuple[Path, int]:
    """A fresh database with the demo run (`claimscope demo`), as a user's first run makes it."""
    db = folder / "demo.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "tui.cli", "--db", str(db), "demo"], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    return db, 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, help="Database with the run (default: run the demo into a temp database).")
    ap.add_argument("--run", type=int, default=1)
    ap.add_argument("--screenshot", type=Path, default=ROOT / "docs" / "report.png")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "report_browser.json")
    args = ap.parse_args()

    from core.pipeline.export import export_run
    from store import open_db
    from store.inspect import run_claim_views

    with tempfile.TemporaryDirectory(prefix="claimscope-report-") as tmp:
        db_path, run_id = (args.db, args.run) if args.db else _demo_db(Path(tmp))
        db = open_db(db_path)
        page = export_run(db, run_id, "html", Path(tmp) / f"run-{run_id}.html")
        claims = [c.text for c in run_claim_views(db, run_id)]
        result = check(page, args.screenshot, claims)
    if args.screenshot.resolve().is_relative_to(ROOT):
        result["screenshot"] = str(args.screenshot.resolve().relative_to(ROOT))
    result |= {"run": run_id, "browser": subprocess.run([chromium(), "--version"], capture_output=True,
                                                         text=True, check=False).stdout.strip()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 1 if result["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
