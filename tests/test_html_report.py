"""``--format html``: structure, safety, determinism and the charts' data (no browser).

The browser end of it (rendering, console, CSP, screenshots) is tests/test_html_browser.py.
"""

from __future__ import annotations

import hashlib
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from occlint.devices.db import shipped_db
from occlint.reporters import charts, html
from occlint.reporters import render as render_format
from tests.conftest import FIXTURES, run_occlint

GAMMA = FIXTURES / "amd" / "co" / "gamma.gfx1100.hsaco"
SUITE_906 = FIXTURES / "amd" / "co" / "suite.gfx906.hsaco"
SUITE_90A = FIXTURES / "amd" / "co" / "suite.gfx90a.hsaco"
NV_GAMMA = FIXTURES / "nvidia" / "cubin" / "gamma.sm_90.cubin"
NV_SMEM = FIXTURES / "nvidia" / "cubin" / "smem_tiles.sm_90.cubin"
GAMMA_NAME = b"_Z16gamma_correctionPhmf"
XSS = b"<img/src=x onerror=al()>"
assert len(XSS) == len(GAMMA_NAME)


class Page(HTMLParser):
    """Every start tag with its attributes, ids, and the text of <script> / <style>."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.ids: list[str] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self._in: str | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if "id" in attributes:
            self.ids.append(attributes["id"])
        if tag in ("script", "style"):
            self._in = tag
            (self.scripts if tag == "script" else self.styles).append("")

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag in ("script", "style"):
            self._in = None

    def handle_endtag(self, tag):
        if tag == self._in:
            self._in = None

    def handle_data(self, data):
        if self._in == "script":
            self.scripts[-1] += data
        elif self._in == "style":
            self.styles[-1] += data

    def find(self, tag: str, **attrs: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag
                and all(a.get(k.replace("_", "-")) == v for k, v in attrs.items())]


def occlint_html(tmp_path: Path, *args: str, name: str = "report.html") -> str:
    out = tmp_path / name
    run = run_occlint(*args, "--format", "html", "-o", str(out))
    assert run.code in (0, 1), run.err
    return out.read_text(encoding="utf-8")


def occlint_json(*args: str) -> dict:
    run = run_occlint(*args, "--format", "json")
    assert run.code in (0, 1), run.err
    return run.json()


def figure_svgs(text: str) -> list[str]:
    """Each chart's SVG, its shared drawing (``<use href="#c-N">`` of a ``<g id="c-N">``
    defined once on the page) put in place."""
    drawings = dict(re.findall(r'<g id="(c-\d+)">(.*?)</g>', text, re.S))
    svgs = re.findall(r'<figure class="chart chart-[a-z]+">\s*(<svg\b.*?</svg>)', text, re.S)
    return [re.sub(r'<use href="#(c-\d+)"/>', lambda m: drawings[m[1]], svg) for svg in svgs]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """AMD and NVIDIA fixtures on two devices, with a launch (so grid charts too)."""
    args = (str(GAMMA), str(NV_GAMMA), str(NV_SMEM), "--device", "w7800", "--device", "h100",
            "--block", "256", "--grid", "1000")
    tmp = tmp_path_factory.mktemp("mixed")
    return occlint_html(tmp, *args), occlint_json(*args)


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """Two AMD suites against a GFX9 device: SGPR charts, arch mismatches, many kernels."""
    args = (str(SUITE_906), str(SUITE_90A), "--device", "mi50")
    tmp = tmp_path_factory.mktemp("suite")
    return occlint_html(tmp, *args), occlint_json(*args)


# --- structure -----------------------------------------------------------------------------

def test_one_row_per_kernel_and_unique_ids(mixed, suite):
    for text, doc in (mixed, suite):
        page = Page(text)
        rows = [a for t, a in page.tags if t == "tr" and "data-worst" in a]
        assert len(rows) == len(doc["kernels"])
        assert len(page.ids) == len(set(page.ids)), "duplicate ids"
        details = [a for t, a in page.tags if t == "details" and "kernel" in a["class"]]
        assert len(details) == len(doc["kernels"])
        links = {a["href"][1:] for t, a in page.tags
                 if t == "a" and (a.get("href") or "").startswith("#")}
        assert links <= set(page.ids), links - set(page.ids)
        uses = {a["href"][1:] for t, a in page.tags if t == "use"}
        assert uses <= set(page.ids), uses - set(page.ids)


def test_self_contained_no_external_resources(mixed):
    text, _ = mixed
    page = Page(text)
    assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", text, re.I)
    assert not page.find("link") and not page.find("img") and not page.find("iframe")
    for tag, attrs in page.tags:
        assert tag != "script" or "src" not in attrs, "external script"
        for key in ("src", "href", "action", "xlink:href", "srcset", "poster", "data"):
            value = attrs.get(key)
            assert value is None or value.startswith("#"), (tag, key, value)
    css = "".join(page.styles)
    assert "@import" not in css and "url(" not in css and "@font-face" not in css


def test_readable_without_css_and_js(mixed):
    """No style attributes (a CSP with style-src 'none' blocks them); charts sized by
    attributes and coloured by presentation attributes; JS is one inline enhancement."""
    text, _ = mixed
    page = Page(text)
    assert not [t for t, a in page.tags if "style" in a]
    assert len(page.styles) == 1 and len(page.scripts) == 1
    for t, a in page.tags:
        if t == "svg":
            assert a.get("width") is not None and a.get("height") is not None
    # Every static string in the script comes from the package; no data is embedded for JS.
    shipped = (Path(html.__file__).parent / "templates" / "report.js").read_text()
    assert page.scripts[0].strip() == shipped.strip()
    # Kernel table, findings and occupancy are plain HTML text.
    assert "<table id=\"kernel-table\"" in text and "<th scope=\"col\"" in text
    assert "16/16" in text and "LCH101" in text


def test_charts_per_kernel_with_current_point(mixed, suite):
    for text, doc in (mixed, suite):
        ok = [k for k in doc["kernels"] if k["status"] == "ok"]
        svgs = figure_svgs(text)
        per_kernel = 0
        for k in ok:
            per_kernel += 3 + (k["vendor"] == "amd" and k["arch"].startswith("gfx9"))
        assert len(svgs) >= per_kernel >= 3 * len(ok) > 0
        for svg in svgs:
            root = ET.fromstring(svg)  # well-formed XML
            assert root.tag == "svg"
            current = [c for c in root.iter("circle") if c.get("class") == "mark-current"]
            assert len(current) == 1
            cx, cy = float(current[0].get("cx")), float(current[0].get("cy"))
            assert charts.LEFT - 1 <= cx <= charts.RIGHT + 1
            assert charts.TOP - 1 <= cy <= charts.BOTTOM
            assert current[0].find("title") is not None
            curve = [p for p in root.iter("path") if p.get("stroke") == charts.CURVE]
            assert len(curve) == 1 and curve[0].get("d", "").startswith("M")
            assert root.find("use") is not None
    # Details of one kernel: the block, VGPR and LDS charts, and SGPRs on GFX9.
    text, _ = suite
    assert text.count('class="chart chart-sgpr"') > 0
    text, _ = mixed
    for key in ("block", "vgpr", "lds", "registers", "shared", "grid"):
        assert f'class="chart chart-{key}"' in text


def test_header_counts_inputs_and_devices(mixed):
    text, doc = mixed
    page = Page(text)
    assert f"occlint {doc['tool']['version']}" in text
    for i in doc["inputs"]:
        assert i["path"] in text
        digest = hashlib.sha256(Path(i["path"]).read_bytes()).hexdigest()
        assert digest in text, "html runs hash the inputs"
    for d in doc["devices"]:
        assert d["name"] in text
    by_severity = doc["summary"]["findings"]["by_severity"]
    counts = re.findall(r'<li class="sev-(\w+)">.*?<strong>(\d+)</strong>', text)
    assert {s: int(n) for s, n in counts} == by_severity
    for r in doc["summary"]["findings"]["by_rule"]:
        assert page.find("tr", id=f"rule-{r['rule']}")


def test_grid_chart_marks_chosen_and_recommended(mixed):
    text, doc = mixed
    k = next(k for k in doc["kernels"] if k["vendor"] == "amd")
    chart = charts.grid_chart(k)
    assert chart is not None
    assert chart.current[0] == 1000
    assert chart.best[0] == k["advice"]["oversubscription"]["recommended_grid"] == 2800
    assert {m.kind for m in chart.markers} == {"chosen", "recommended"}
    assert "Chosen grid 1,000" in text and "recommended 2,800" in text


def test_grid_model():
    units, concurrent, target = 35, 280, 2800
    t = charts.relative_time
    assert t(target, units, concurrent, target) == 1.0
    assert t(10 * target, units, concurrent, target) == 1.0  # flat past the target
    assert t(140, units, concurrent, target) == pytest.approx(2.0)  # half the device idle
    assert t(980, units, concurrent, target) == pytest.approx(1.0)  # balanced
    assert t(981, units, concurrent, target) > t(1015, units, concurrent, target)  # tail
    assert t(1000, units, concurrent, target) == pytest.approx(1.015)  # advice.tail's cost


def test_no_grid_chart_without_launch(suite):
    text, _ = suite
    assert 'class="chart chart-grid"' not in text


def test_anchors_are_stable(tmp_path, mixed):
    """A kernel's anchor depends on file, entry, kernel and device, not on the order."""
    text, _ = mixed
    alone = occlint_html(tmp_path, str(GAMMA), "--device", "w7800")
    anchor = re.search(r'<details id="(k-[^"]+)"', alone)[1]
    assert anchor.startswith("k-_Z16gamma_correctionPhmf-")
    assert f'id="{anchor}"' in text and f'href="#{anchor}"' in text


def test_byte_identical_across_runs(tmp_path):
    args = (str(SUITE_906), str(GAMMA), "--device", "mi50", "--device", "w7800",
            "--grid", "999")
    first = occlint_html(tmp_path, *args, name="a.html")
    second = occlint_html(tmp_path, *args, name="b.html")
    assert first == second
    assert not re.search(r"20\d\d-\d\d-\d\d", first), "no timestamps"


# --- escaping ------------------------------------------------------------------------------

def xss_binary(tmp_path: Path) -> Path:
    data = GAMMA.read_bytes()
    assert data.count(GAMMA_NAME) >= 2  # metadata and symbol table
    path = tmp_path / "xss.gfx1100.hsaco"
    path.write_bytes(data.replace(GAMMA_NAME, XSS))
    return path


def test_kernel_names_are_escaped(tmp_path):
    path = xss_binary(tmp_path)
    doc = occlint_json(str(path), "--device", "w7800", "--grid", "1000")
    assert doc["kernels"] and doc["kernels"][0]["name"] == XSS.decode()
    text = occlint_html(tmp_path, str(path), "--device", "w7800", "--grid", "1000")
    assert XSS.decode() not in text
    assert "&lt;img/src=x onerror=al()&gt;" in text
    page = Page(text)
    assert not page.find("img")
    assert not [a for _, a in page.tags if any(k.startswith("on") for k in a)]
    # Attribute contexts (link titles) hold the escaped name too.
    assert page.find("a", title=XSS.decode())
    assert 'title="&lt;img/src=x onerror=al()&gt;"' in text
    # Anchors are slugs: nothing of the name survives that needs escaping.
    anchors = [a["id"] for t, a in page.tags if t == "details" and a["id"] != "inputs"]
    assert anchors and all(re.fullmatch(r"k-[A-Za-z0-9_-]+", a) for a in anchors)
    for svg in figure_svgs(text):
        ET.fromstring(svg)


def test_strings_in_every_context_are_escaped():
    """A synthetic document: names, paths, messages, devices and advice carry markup."""
    doc = occlint_json(str(GAMMA), "--device", "w7800", "--grid", "1000")
    evil = '<b x="1">&amp;\'</b>'
    k = doc["kernels"][0]
    k["demangled"] = "void f<int, " + evil + ">()"
    k["file"] = doc["inputs"][0]["path"] = "dir/" + evil + ".hsaco"
    k["entry"] = evil
    k["message"] = evil
    k["notes"] = [evil]
    for f in k["findings"]:
        f["message"] += evil
        f["advice"] = evil
    doc["errors"] = [{"file": evil, "entry": evil, "message": evil}]
    text = html.render(doc)
    assert evil not in text and "<b " not in text
    assert "&lt;b x=&#34;1&#34;&gt;&amp;amp;&#39;&lt;/b&gt;" in text


def test_inline_json_escaping_helper_not_needed():
    """The report embeds no JSON for its script: data lives in escaped attributes."""
    doc = occlint_json(str(GAMMA), "--device", "w7800")
    text = html.render(doc)
    assert 'type="application/json"' not in text and "JSON.parse" not in text


# --- charts from the engines ---------------------------------------------------------------

def _chart_checks(doc: dict) -> int:
    """Each chart's current point is the document's occupancy; each next step the
    document lists is the chart's 'gain' point (the same engine search)."""
    db = shipped_db()
    checked = 0
    for k in doc["kernels"]:
        drawn, note = charts.kernel_charts(k, db)
        assert not note, note
        if k["status"] != "ok":
            assert not drawn
            continue
        o = k["occupancy"]
        now = o["waves_per_simd"] if k["vendor"] == "amd" else o["warps_per_sm"]
        by_key = {c.key: c for c in drawn}
        for c in drawn:
            if c.key != "grid":
                assert c.current[1] == now, (k["name"], c.key)
        per_block = 1 if k["vendor"] == "amd" else -(-o["block_size"] // 32)
        for step in k["next_steps"]:
            chart = by_key.get(step["resource"])
            if chart is None or step["target"] is None or chart.current[0] != step["current"]:
                continue
            assert chart.gain == (step["target"], step["occupancy_then"] * per_block)
            checked += 1
    return checked


def test_charts_agree_with_document_amd():
    doc = occlint_json(str(FIXTURES / "amd" / "co"))
    assert len(doc["kernels"]) > 100
    assert _chart_checks(doc) > 20


def test_charts_agree_with_document_nvidia():
    doc = occlint_json(str(FIXTURES / "nvidia" / "cubin"), "--device", "h100")
    assert _chart_checks(doc) > 0


def test_step_levels_and_cliffs():
    def f(v: int) -> int:
        return 16 if v <= 96 else 12 if v <= 128 else 8 if v <= 192 else 0

    assert charts.step_levels(f, 0, 256) == ((0, 16), (97, 12), (129, 8), (193, 0))
    assert charts.cliffs(f, 100, 0, 256) == ((96, 16), (129, 8))
    assert charts.cliffs(f, 10, 0, 256) == (None, (97, 12))
    assert charts.cliffs(f, 250, 0, 256) == ((192, 8), None)
    coarse = charts.step_levels(f, 0, 256, tol=8)
    assert [v for _, v in coarse] == [16, 12, 8, 0]
    assert all(abs(x - e) < 8 for (x, _), e in zip(coarse[1:], (97, 129, 193), strict=True))


def test_charts_left_out_when_database_differs():
    doc = occlint_json(str(GAMMA), "--device", "w7800")
    doc["kernels"][0]["occupancy"]["occupancy"] = 0.5  # not what the shipped DB gives
    text = html.render(doc)
    assert "No occupancy charts: the device database differs" in text
    assert not figure_svgs(text)


def test_kernels_that_cannot_run_show_their_status(suite):
    text, doc = suite
    bad = [k for k in doc["kernels"] if k["status"] != "ok"]
    assert bad
    assert bad[0]["message"] in text.replace("&#39;", "'")


def test_registry_and_options():
    doc = occlint_json(str(GAMMA), "--device", "w7800")
    # check.py passes text-format options; the HTML reporter ignores them.
    assert render_format("html", doc, color=True, statistics=False, quiet=True) == \
        html.render(doc)


def test_nice_ticks_and_bytes():
    assert charts.nice_step(1024) == 256
    assert charts.nice_step(256) == 64
    assert charts.nice_step(10) == 2
    assert charts.fmt_bytes(65536) == "64 KiB"
    assert charts.fmt_bytes(45568) == "44.5 KiB"
    assert charts.fmt_bytes(100) == "100 B"


def test_big_report_collapses_details(suite):
    text, doc = suite
    assert len(doc["kernels"]) > html.OPEN_DETAILS_UP_TO
    assert '<details id="k-' in text and 'class="kernel sev-error" open>' not in text
    assert not re.search(r'<details id="k-[^>]* open>', text)
    json.dumps(doc)  # the document itself is untouched by rendering


def test_user_device_file_keeps_charts_and_report_file_mode(tmp_path):
    """With --device-file the page is drawn from the database the run used (an overlay that
    changes the architecture's limits must not be mistaken for a database mismatch), and
    ``-o`` writes an ordinary file (mode from the umask, not mkstemp's 0600)."""
    devices = tmp_path / "devices.toml"
    devices.write_text("[amd_architectures.gfx1100]\nmax_waves_per_simd = 8\n\n"
                       '[[device]]\nname = "Lab Card"\narch = "gfx1100"\n'
                       "compute_units = 12\nwgps = 6\n")
    out = tmp_path / "report.html"
    run = run_occlint(str(GAMMA), "--device-file", str(devices), "--device", "lab-card",
                      "--format", "html", "-o", str(out), "--exit-zero")
    assert run.code == 0, run.err
    text = out.read_text()
    assert "Lab Card" in text
    assert "device database differs" not in text
    assert figure_svgs(text)
    import os

    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask


# --- size: shared drawings and shared details (issue 22) ------------------------------------

def test_identical_charts_are_drawn_once(suite):
    """Every chart <use>s a drawing defined once on the page; no two definitions alike."""
    text, _ = suite
    drawings = re.findall(r'<g id="(c-\d+)">(.*?)</g>', text, re.S)
    bodies = [body for _, body in drawings]
    assert drawings and len(bodies) == len(set(bodies))
    figures = re.findall(r'<figure class="chart chart-[a-z]+">\s*<svg\b[^>]*>\s*<use href="#'
                         r'(c-\d+)"/>', text)
    assert len(figures) == text.count('<figure class="chart ')
    assert set(figures) == {i for i, _ in drawings}
    assert len(drawings) < len(figures)  # the suites share resource profiles


def test_one_kernel_in_two_inputs_shares_its_details(tmp_path):
    """The same code object twice (a copy in another directory): two table rows, one details
    section naming both files, each row's link landing in it."""
    copy = tmp_path / "copy" / GAMMA.name
    copy.parent.mkdir()
    copy.write_bytes(GAMMA.read_bytes())
    text = occlint_html(tmp_path, str(GAMMA), str(copy), "--device", "w7800", "--grid", "1000")
    page = Page(text)
    rows = [a for t, a in page.tags if t == "tr" and "data-worst" in a]
    details = [a for t, a in page.tags if t == "details" and "kernel" in a["class"]]
    assert len(rows) == 2 and len(details) == 1
    hrefs = re.findall(r'<td class="kname"><a class="name" href="#(k-[^"]+)"', text)
    assert len(set(hrefs)) == 2 and set(hrefs) <= set(page.ids)
    start = text.index('<details id="k-')
    section = text[start:text.index("</details>", start)]
    assert str(GAMMA) in section and str(copy) in section
    assert all(f'id="{h}"' in section for h in hrefs)


def test_library_page_is_small(tmp_path):
    """759 AMD kernels in 69 code objects and the containers (840 rows): 3.8 MB before
    drawings and details were shared (issue 22), 2.6 MB after."""
    fixtures = FIXTURES / "amd"
    out = tmp_path / "library.html"
    run = run_occlint(str(fixtures / "co"), str(fixtures / "containers"), "--format", "html",
                      "-o", str(out), "--isolated")
    assert run.code in (0, 1), run.err
    text = out.read_text(encoding="utf-8")
    rows = text.count("<tr data-worst")
    assert rows > 800
    assert out.stat().st_size < 3_300 * rows  # bytes per kernel row (4,550 before)
