"""The HTML report in a real browser: Debian's headless Chromium.

Each page is opened twice: as written, and as a copy carrying a strict
Content-Security-Policy (no scripts, no styles: what Jenkins does to archived HTML). Checks:
Chromium logs no console message (under the CSP: only the two expected refusals of the
inline ``<style>`` and ``<script>``, nothing for style attributes or resources), the script
ran (or not), and a screenshot shows the charts: the curve and current-point colours,
which come from SVG presentation attributes, are on screen with and without CSS.

Skipped when chromium is missing; in CI (CI=true) that fails (tests/conftest.skip_or_fail).
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from occlint.reporters import charts
from tests.conftest import FIXTURES, REPO, run_occlint, skip_or_fail

pytestmark = pytest.mark.browser

CSP = ("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
       "img-src data:; style-src 'none'; script-src 'none'\">")
GAMMA = FIXTURES / "amd" / "co" / "gamma.gfx1100.hsaco"
NV_SMEM = FIXTURES / "nvidia" / "cubin" / "smem_tiles.sm_90.cubin"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--hide-scrollbars", "--mute-audio",
                  "--enable-logging=stderr", "--v=0", "--force-device-scale-factor=1"]
STYLE_REFUSED = "Applying inline style violates the following Content Security Policy"
SCRIPT_REFUSED = "Executing inline script violates the following Content Security Policy"


@pytest.fixture(scope="module")
def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    skip_or_fail("chromium not installed (Debian: apt-get install chromium)")


def browse(chromium: str, page: Path, tmp: Path, *args: str) -> tuple[str, list[str]]:
    """Run headless Chromium on ``page``; (stdout, console messages from its log)."""
    profile = tmp / f"profile-{len(list(tmp.iterdir()))}"
    env = {**os.environ, "HOME": str(tmp)}
    proc = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args,
                           page.as_uri()], capture_output=True, text=True, timeout=120,
                          env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    console = re.findall(r":CONSOLE(?:\(\d+\)|:\d+)\] \"(.*?)\", source:", proc.stderr)
    return proc.stdout, console


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB bytes): a small PNG reader (8-bit RGB/RGBA).

    Screenshots are mostly runs of one colour: where a Sub or Paeth row's filtered byte is
    0 and (Paeth) the byte above equals the one above-left, the byte is its left neighbour's,
    so such runs are copied whole and only the rest is reconstructed byte by byte; Up rows
    are added eight bits at a time without carries, on Python integers."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, []
    width = height = channels = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color)
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    low7 = int.from_bytes(b"\x7f" * stride, "big")
    high = int.from_bytes(b"\x80" * stride, "big")
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:
            _unfilter_runs(line, prev, channels, _nonzero(line, channels), paeth=False)
        elif kind == 2:
            x, u = int.from_bytes(line, "big"), int.from_bytes(prev, "big")
            line = bytearray((((x & low7) + (u & low7)) ^ ((x ^ u) & high))
                             .to_bytes(stride, "big"))
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind == 4:
            # a byte needs reconstructing where it is filtered to non-zero or the row above
            # changes there (b != c); the first pixel always
            above = int.from_bytes(prev[channels:], "big") ^ \
                int.from_bytes(prev[:-channels], "big")
            mask = (int.from_bytes(line[channels:], "big") | above).to_bytes(
                stride - channels, "big")
            _unfilter_runs(line, prev, channels, _nonzero_mask(mask, channels), paeth=True)
        rows.append(bytes(line) if channels == 3 else bytes(
            v for i, v in enumerate(line) if i % 4 != 3))
        prev = line
    return width, height, rows


_RUN = re.compile(rb"[^\x00]+")


def _nonzero(line: bytearray, channels: int) -> list[tuple[int, int]]:
    return _nonzero_mask(bytes(line[channels:]), channels)


def _nonzero_mask(mask: bytes, channels: int) -> list[tuple[int, int]]:
    """The spans of bytes (row offsets) to reconstruct one by one: the first pixel, and the
    non-zero runs of ``mask`` (which starts at the second pixel)."""
    spans = [(0, channels)]
    for m in _RUN.finditer(mask):
        s, e = m.start() + channels, m.end() + channels
        if s <= spans[-1][1]:
            spans[-1] = (spans[-1][0], e)
        else:
            spans.append((s, e))
    return spans


def _unfilter_runs(line: bytearray, prev: bytearray, channels: int,
                   spans: list[tuple[int, int]], paeth: bool) -> None:
    """Undo Sub or Paeth in ``spans``; every byte between spans is its left neighbour's."""
    done = 0
    for s, e in spans:
        if s > done:  # a run of bytes equal to the byte one pixel to their left
            n = s - done
            pattern = bytes(line[done - channels:done])
            line[done:s] = (pattern * (n // channels + 1))[:n]
        for i in range(s, e):
            a = line[i - channels] if i >= channels else 0
            if not paeth:
                line[i] = (line[i] + a) & 0xFF
                continue
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        done = e
    if done < len(line):
        n = len(line) - done
        pattern = bytes(line[done - channels:done])
        line[done:] = (pattern * (n // channels + 1))[:n]


def colour_count(rows: list[bytes], hex_colour: str) -> int:
    """Pixels of exactly this colour (anti-aliased edges aside, lines keep their colour)."""
    rgb = bytes.fromhex(hex_colour.lstrip("#"))
    total = 0
    for row in rows:
        start = row.find(rgb)
        while start != -1:
            if start % 3 == 0:
                total += 1
            start = row.find(rgb, start + 1)
    return total


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    out = tmp / "report.html"
    run = run_occlint(str(GAMMA), str(NV_SMEM), "--device", "w7800", "--device", "h100",
                      "--block", "256", "--grid", "1000", "--format", "html", "-o", str(out))
    assert run.code in (0, 1), run.err
    return out


def with_csp(page: Path) -> Path:
    text = page.read_text(encoding="utf-8")
    assert text.count("<head>") == 1
    copy = page.with_name("csp-" + page.name)
    copy.write_text(text.replace("<head>", "<head>\n" + CSP, 1), encoding="utf-8")
    return copy


def check_charts_drawn(png: Path) -> None:
    width, height, rows = read_png(png)
    assert (width, height) == (1280, 3200)
    curve = colour_count(rows, charts.CURVE)
    current = colour_count(rows, charts.CURRENT)
    assert curve > 800, f"occupancy curves not drawn ({curve} curve pixels)"
    assert current > 80, f"current-point markers not drawn ({current} pixels)"
    # Not blank anywhere the report has content: the top (header) and the chart area.
    for band in (rows[:200], rows[1000:2000]):
        assert any(len(set(row)) > 3 for row in band), "blank band"


def test_renders_without_console_messages(chromium, report, tmp_path):
    png = tmp_path / "page.png"
    _, console = browse(chromium, report, tmp_path, f"--screenshot={png}",
                        "--window-size=1280,3200")
    assert console == []
    check_charts_drawn(png)
    dom, console = browse(chromium, report, tmp_path, "--dump-dom")
    assert console == []
    assert 'data-js="on"' in dom, "the enhancement script did not run to its end"
    assert '<th scope="col" data-sort="num" class="num"><button type="button">' in dom
    assert 'class="tools"' in dom


def test_renders_under_strict_csp(chromium, report, tmp_path):
    page = with_csp(report)
    png = tmp_path / "csp.png"
    _, console = browse(chromium, page, tmp_path, f"--screenshot={png}",
                        "--window-size=1280,3200")
    # Exactly the inline <style> and <script> are refused: no style attribute (that
    # message adds "hashes do not apply to ... style attributes"), no blocked resource.
    assert len(console) == 2, console
    assert sum(m.startswith(STYLE_REFUSED) for m in console) == 1, console
    assert sum(m.startswith(SCRIPT_REFUSED) for m in console) == 1, console
    assert not [m for m in console if "style attributes" in m]
    check_charts_drawn(png)
    dom, _ = browse(chromium, page, tmp_path, "--dump-dom")
    assert 'data-js="on"' not in dom and 'class="tools"' not in dom
    assert "16/16" in dom and "gamma_correction" in dom


def test_crafted_kernel_name_stays_text(chromium, tmp_path):
    data = GAMMA.read_bytes().replace(b"_Z16gamma_correctionPhmf", b"<img/src=x onerror=al()>")
    binary = tmp_path / "xss.gfx1100.hsaco"
    binary.write_bytes(data)
    out = tmp_path / "xss.html"
    run = run_occlint(str(binary), "--device", "w7800", "--format", "html", "-o", str(out))
    assert run.code in (0, 1), run.err
    dom, console = browse(chromium, out, tmp_path, "--dump-dom")
    assert console == []
    assert "<img" not in dom
    assert "&lt;img/src=x onerror=al()&gt;" in dom


def test_launches_section_renders(chromium, tmp_path):
    """A trace's launches section: no console message normally, only the two expected
    refusals under the strict CSP (no style attribute), the GPU-time bars drawn in the
    colour of their worst finding, and the launch table sortable."""
    from occlint.reporters.html import SEVERITY_COLOR

    out = tmp_path / "launches.html"
    trace = REPO / "fixtures" / "traces" / "kineto" / "raw_odd.pt.trace.json.gz"
    source = REPO / "benchmarks" / "traces" / "kernels" / "odd_launches.cu"  # its kernels'
    run = run_occlint(str(trace), str(source), "--format", "html", "-o", str(out))
    assert run.code == 1, run.err
    png = tmp_path / "launches.png"
    _, console = browse(chromium, out, tmp_path, f"--screenshot={png}",
                        "--window-size=1280,3200")
    assert console == []
    _, _, rows = read_png(png)
    assert colour_count(rows, SEVERITY_COLOR["warning"]) > 2000  # the gamma bar alone
    dom, console = browse(chromium, out, tmp_path, "--dump-dom")
    assert console == [] and 'id="launch-table"' in dom
    assert '<button type="button">Est. saving</button>' in dom
    _, console = browse(chromium, with_csp(out), tmp_path, "--dump-dom")
    assert len(console) == 2 and not [m for m in console if "style attributes" in m], console


def test_launch_owners_as_column_and_colour(chromium, tmp_path):
    """On a real PyTorch run (user kernels beside cuBLAS, cuDNN, PyTorch's own): every launch
    row names its owner as the JSON does, the user's rows come first, and each owner kind is
    drawn in its colour (a square, so it reads beside the severity dots)."""
    import json

    from occlint.reporters.html import OWNER_COLOR

    trace = REPO / "fixtures" / "traces" / "kineto" / "mixed.pt.trace.json.gz"
    out = tmp_path / "owners.html"
    assert run_occlint(str(trace), "--format", "html", "-o", str(out)).code == 1
    doc = json.loads(run_occlint(str(trace), "--format", "json").out)
    kinds = {r["owner"]["kind"] for r in doc["launches"]}
    assert {"user", "library", "framework"} <= kinds
    dom, console = browse(chromium, out, tmp_path, "--dump-dom")
    assert console == []
    table = dom[dom.index('id="launch-table"'):]
    shown = re.findall(r'<tr id="launch-(\d+)"[^>]* data-owner="(\w+)"', table)
    assert len(shown) == len(doc["launches"])
    assert all(doc["launches"][int(i)]["owner"]["kind"] == kind for i, kind in shown)
    order = [kind == "user" for _, kind in shown]
    assert order == sorted(order, reverse=True), "the user's launches come first"
    png = tmp_path / "owners.png"
    _, console = browse(chromium, out, tmp_path, f"--screenshot={png}",
                        "--window-size=1600,6000")
    assert console == []
    _, _, rows = read_png(png)
    for kind in kinds:
        assert colour_count(rows, OWNER_COLOR[kind]) > 20, kind


# --- layout at common desktop widths (issue 22) ---------------------------------------------

# Measured in the page by Chromium itself: a copy of the report with this script appended
# writes what it finds into <pre id="layout-facts"> (dumped with --dump-dom).
MEASURE = r"""
<script>
(function () {
  const px = (v) => Math.round(v * 10) / 10;
  const lines = (el) => {
    const range = document.createRange();
    range.selectNodeContents(el);
    return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
  };
  const facts = {
    viewport: document.documentElement.clientWidth,
    pageWidth: document.documentElement.scrollWidth,
    tables: [...document.querySelectorAll("table.data")].filter((t) => t.offsetParent)
      .map((t) => ({id: t.id, right: px(t.getBoundingClientRect().right)})),
    deviceLines: [...document.querySelectorAll("td.device")].map(lines),
    traceCells: [...document.querySelectorAll("#launch-table td.path")].map((td) => {
      const r = td.getBoundingClientRect();
      return {right: px(r.right), text: td.textContent};
    }),
    names: [...document.querySelectorAll("td.kname .name")].map((e) => {
      const r = e.getBoundingClientRect();
      return {text: e.textContent, title: e.title, height: px(r.height),
              lineHeight: parseFloat(getComputedStyle(e).lineHeight),
              right: px(r.right), cellRight: px(e.parentElement.getBoundingClientRect().right)};
    }),
    charts: [...document.querySelectorAll("figure.chart svg")].map((s) => px(
      s.getBoundingClientRect().width)),
  };
  const gpu = document.querySelector("svg.gputime");
  if (gpu) {
    const label = (t) => ({text: t.textContent, right: px(t.getBBox().x + t.getBBox().width)});
    facts.gpu = {width: gpu.width.baseVal.value,
                 labels: [...gpu.querySelectorAll("text")].map(label)};
  }
  // Chart frames (axes, ticks, titles) are defined once and <use>d: measure each in a
  // visible copy of the chart's box.
  const box = document.querySelector("figure.chart svg");
  facts.frames = [...document.querySelectorAll("g[id^=frame-]")].map((frame) => {
    const probe = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    probe.setAttribute("width", box.getAttribute("width"));
    probe.setAttribute("height", box.getAttribute("height"));
    probe.appendChild(frame.cloneNode(true));
    document.body.appendChild(probe);
    const texts = [...probe.querySelectorAll("text")].map((t) => {
      const b = t.getBoundingClientRect(), o = probe.getBoundingClientRect();
      return {text: t.textContent, left: px(b.left - o.left), right: px(b.right - o.left),
              top: px(b.top - o.top), bottom: px(b.bottom - o.top),
              rotated: (t.getAttribute("transform") || "").includes("rotate")};
    });
    probe.remove();
    return {id: frame.id, width: +box.getAttribute("width"),
            height: +box.getAttribute("height"), texts};
  });
  const pre = document.createElement("pre");
  pre.id = "layout-facts";
  pre.textContent = JSON.stringify(facts);
  document.body.appendChild(pre);
})();
</script>
"""
WIDTHS = (1400, 1920)


@pytest.fixture(scope="module")
def busy_report(tmp_path_factory) -> Path:
    """Two traces (the same kernels in both), binaries with C++ names for two devices of two
    vendors: every table and chart of the report, with long names."""
    tmp = tmp_path_factory.mktemp("layout")
    out = tmp / "busy.html"
    traces = "fixtures/traces/kineto/"
    run = run_occlint(traces + "raw_odd.pt.trace.json.gz",
                      traces + "resnet18_train.pt.trace.json.gz",
                      traces + "resnet18_infer.pt.trace.json.gz",
                      *(str(p.relative_to(REPO)) for p in (GAMMA, NV_SMEM)),
                      "fixtures/amd/co/suite.gfx906.hsaco", "--device", "h100",
                      "--device", "w7800", "--block", "256", "--grid", "1000",
                      "--format", "html", "-o", str(out), "--isolated", cwd=REPO)
    assert run.code in (0, 1), run.err
    return out


def layout_facts(chromium: str, page: Path, tmp: Path, width: int) -> dict:
    import html
    import json

    probe = page.with_name(f"measure-{width}-{page.name}")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"),
                     encoding="utf-8")
    dom, console = browse(chromium, probe, tmp, "--dump-dom", f"--window-size={width},1200")
    assert console == [], console
    found = re.search(r'<pre id="layout-facts">(.*?)</pre>', dom, re.S)
    assert found, "the measuring script did not run"
    return json.loads(html.unescape(found.group(1)))


@pytest.mark.parametrize("width", WIDTHS)
def test_layout_at_desktop_widths(chromium, busy_report, tmp_path, width):
    """At 1400 and 1920 px: nothing wider than the window (the trace column is on screen),
    device names on one line, long kernel names broken and clamped to three lines with the
    whole name in the title, every GPU-time bar labelled differently and inside its chart,
    charts at least 340 px wide with both axis titles and every tick label inside the box.
    Screenshots go to $OCCLINT_SCREENSHOTS (docs/ keeps report-1400.png / report-1920.png)."""
    facts = layout_facts(chromium, busy_report, tmp_path, width)
    viewport = facts["viewport"]
    assert viewport == width
    assert facts["pageWidth"] <= viewport, "the page scrolls sideways"
    assert facts["tables"] and all(t["right"] <= viewport for t in facts["tables"])
    assert facts["traceCells"] and all(c["right"] <= viewport for c in facts["traceCells"])
    assert facts["deviceLines"] and set(facts["deviceLines"]) == {1}
    long_names = [n for n in facts["names"] if len(n["text"]) > 120]
    assert long_names, "the report has no long kernel name to check"
    for n in facts["names"]:
        assert n["height"] <= 3 * n["lineHeight"] + 1, n["text"][:80]
        assert n["right"] <= n["cellRight"] + 0.5, n["text"][:80]
    for n in long_names:
        assert n["title"] == n["text"], "the whole name is in the title"
    gpu = facts["gpu"]
    texts = [label["text"] for label in gpu["labels"]]
    assert len(texts) == len(set(texts)), "two GPU-time bars read the same"
    assert all(".pt.trace.json.gz" in t for t in texts if "other kernels" not in t)
    assert all(label["right"] <= gpu["width"] for label in gpu["labels"]), gpu["labels"]
    assert facts["charts"] and min(facts["charts"]) >= 340
    for frame in facts["frames"]:
        assert sum(t["rotated"] for t in frame["texts"]) == 1, frame["id"]  # the y-axis title
        for t in frame["texts"]:
            assert t["left"] >= 0 and t["right"] <= frame["width"], (frame["id"], t)
            assert t["top"] >= 0 and t["bottom"] <= frame["height"], (frame["id"], t)
    shots = Path(os.environ.get("OCCLINT_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    png = shots / f"report-{width}.png"
    _, console = browse(chromium, busy_report, tmp_path, f"--screenshot={png}",
                        f"--window-size={width},2000")
    assert console == []
    _, height, rows = read_png(png)
    assert height == 2000 and any(len(set(row)) > 3 for row in rows[:300])


def test_the_longest_kernel_name_is_cut_with_the_whole_name_on_hover(chromium, tmp_path):
    """Issue 31: the 2,117-character cuDNN / CUTLASS name of mixed.pt.trace.json.gz (its
    longest kernel event name, read here from the trace) takes at most three lines of its
    cell at 1400 px, its title holds the whole name, and a click shows it whole."""
    import gzip
    import json

    trace = REPO / "fixtures" / "traces" / "kineto" / "mixed.pt.trace.json.gz"
    events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
    longest = max((e["name"] for e in events if e.get("cat") == "kernel"), key=len)
    assert len(longest) > 2000
    out = tmp_path / "mixed.html"
    assert run_occlint(str(trace), "--format", "html", "-o", str(out), "--isolated").code == 1
    facts = layout_facts(chromium, out, tmp_path, 1400)
    assert facts["pageWidth"] <= facts["viewport"] == 1400
    [cell] = [n for n in facts["names"] if n["title"] == longest]
    assert cell["text"] == longest
    assert cell["height"] <= 3 * cell["lineHeight"] + 1
    assert cell["right"] <= cell["cellRight"] + 0.5
    shots = Path(os.environ.get("OCCLINT_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    _, console = browse(chromium, out, tmp_path, f"--screenshot={shots / 'mixed-1400.png'}",
                        "--window-size=1400,2400")
    assert console == []
    # one click on the cut name shows it whole, a second cuts it again
    heights = clicked_heights(chromium, out, tmp_path, longest)
    assert heights[1] > 3 * cell["lineHeight"] + 1 and heights[2] == heights[0]


CLICK = r"""
<script>
(function () {
  const name = [...document.querySelectorAll("td.kname .name")].find(
    (e) => e.title === document.getElementById("wanted").textContent);
  const heights = [name.getBoundingClientRect().height];
  for (let i = 0; i < 2; i++) {
    name.click();
    heights.push(name.getBoundingClientRect().height);
  }
  const pre = document.createElement("pre");
  pre.id = "click-facts";
  pre.textContent = JSON.stringify(heights);
  document.body.appendChild(pre);
})();
</script>
"""


def clicked_heights(chromium: str, page: Path, tmp: Path, title: str) -> list[float]:
    """The heights of the launch-table name whose title is ``title``: before a click, after
    one and after a second (measured by Chromium at 1400 px)."""
    import html
    import json

    probe = page.with_name("click-" + page.name)
    wanted = f'<pre hidden id="wanted">{html.escape(title)}</pre>'
    probe.write_text(page.read_text(encoding="utf-8").replace(
        "</body>", wanted + CLICK + "</body>"), encoding="utf-8")
    dom, console = browse(chromium, probe, tmp, "--dump-dom", "--window-size=1400,1200")
    assert console == [], console
    found = re.search(r'<pre id="click-facts">(.*?)</pre>', dom, re.S)
    assert found, "the clicking script did not run"
    return json.loads(html.unescape(found.group(1)))


def _png(path: Path, rows: list[bytes], width: int, channels: int) -> None:
    """Write ``rows`` as a PNG whose rows cycle through the five filters (PNG spec 9.2)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + \
            struct.pack(">I", zlib.crc32(kind + body))

    def paeth(a: int, b: int, c: int) -> int:
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        return a if pa <= pb and pa <= pc else b if pb <= pc else c

    raw, prev = b"", bytes(width * channels)
    for y, row in enumerate(rows):
        kind = y % 5
        out = bytearray([kind])
        for i, x in enumerate(row):
            a = row[i - channels] if i >= channels else 0
            c = prev[i - channels] if i >= channels else 0
            pred = (0, a, prev[i], (a + prev[i]) >> 1, paeth(a, prev[i], c))[kind]
            out.append((x - pred) & 0xFF)
        raw += bytes(out)
        prev = row
    ihdr = struct.pack(">IIBBBBB", width, len(rows), 8, 2 if channels == 3 else 6, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) +
                     chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


@pytest.mark.parametrize("channels", [3, 4])
def test_png_reader_undoes_every_filter(tmp_path, channels):
    """read_png (its runs copied whole included) gives back the pixels of a PNG whose rows
    use each of the five filters, over runs of one colour, edges and noise."""
    import random

    rng = random.Random(channels)
    width, rows = 37, []
    for y in range(40):
        colour = bytes(rng.randrange(256) for _ in range(channels))
        row = bytearray(colour * width)
        for _ in range(y % 4 * 3):  # noise over the runs
            row[rng.randrange(len(row))] = rng.randrange(256)
        rows.append(bytes(row) if y % 7 else (rows[-1] if rows else bytes(row)))
    path = tmp_path / "filters.png"
    _png(path, rows, width, channels)
    w, h, got = read_png(path)
    assert (w, h) == (width, len(rows))
    assert got == [r if channels == 3 else bytes(v for i, v in enumerate(r) if i % 4 != 3)
                   for r in rows]
