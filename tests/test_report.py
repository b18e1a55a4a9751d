"""HTML reports of a run and of a sweep: one self-contained file with the expected
figures, checked in headless Chromium (DOM, no broken images, a non-blank screenshot)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import ROOT, needs_core
from test_sweep import cli  # noqa: F401 - the in-process CLI fixture

pytestmark = needs_core

BASE = {
    "run": {"duration": "2s", "seed": 1},
    "topology": {
        "kind": "dumbbell",
        "bottleneck": {"down": "1.5Mbit", "up": "256kbit", "delay": "50ms",
                       "queue": {"kind": "droptail", "limit": "20000B", "rule": "bytes-strict"}},
    },
    "flows": [
        {"name": "load", "direction": "down", "transport": {"kind": "udp"},
         "app": {"kind": "cbr", "size": "1500B", "interval": "7.5ms", "jitter": {"dist": "exponential"}}},
        {"name": "voip", "direction": "down", "pair": 0, "transport": {"kind": "udp"},
         "app": {"kind": "cbr", "size": "186B", "interval": "20ms", "jitter": {"dist": "normal", "sd": "1ms"}}},
    ],
}
SWEPT_METRICS = ("goodput_bps", "loss_rate", "delay_p50_s", "delay_p95_s", "delay_p99_s")  # finite for UDP flows
AXES = ("topology.bottleneck.queue.limit", "topology.bottleneck.queue.rule")


class Page(HTMLParser):
    """Collects what the checks need: figures, images, external references."""

    def __init__(self):
        super().__init__()
        self.figures: list[str] = []
        self.images: list[dict] = []
        self.external: list[str] = []
        self.scripts = 0
        self.sections: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "figure" and "plot" in a.get("class", ""):
            self.figures.append(a.get("data-plot", ""))
        if tag == "img":
            self.images.append(a)
        if tag == "script":
            self.scripts += 1
        if tag == "section":
            self.sections.append(a.get("id", ""))
        for key in ("src", "href"):
            v = a.get(key)
            if v and not v.startswith(("data:", "#")):
                self.external.append(f"{tag} {key}={v[:60]}")
        if tag == "link":
            self.external.append(f"link {a}")


def parse(html: str) -> Page:
    p = Page()
    p.feed(html)
    return p


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    from ccbench.backends.sim import simulate
    from ccbench.scenario import Scenario

    d = tmp_path_factory.mktemp("run") / "adsl"
    simulate(Scenario.from_dict(BASE), seed=1).save(d)
    return d


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    import tomli_w

    from ccbench.sweep import loads_sweep, run_sweep

    tmp = tmp_path_factory.mktemp("sweep")
    doc = {
        "description": "report test",
        "scenario": BASE,
        "sweep": {"seeds": 2, AXES[0]: ["10000B", "20000B", "40000B"], AXES[1]: ["bytes-strict", "bytes-loose"]},
    }
    spec = loads_sweep(tomli_w.dumps(doc), source="report_sweep.toml")
    spec.grid[AXES[0]].append("-1B")  # one failing value: shown as failed points, not plotted
    spec.__post_init__()
    res = run_sweep(spec, tmp / "out", jobs=2, progress=False)
    assert len(res.errors) == 4 and res.ok == 12
    return tmp / "out"


@pytest.fixture(scope="module")
def run_html(run_dir, tmp_path_factory):
    from ccbench.report import write_report

    return write_report(run_dir, tmp_path_factory.mktemp("html") / "run.html")


@pytest.fixture(scope="module")
def sweep_html(sweep_dir, tmp_path_factory):
    from ccbench.report import write_report

    t0 = time.perf_counter()
    out = write_report(sweep_dir, tmp_path_factory.mktemp("html") / "sweep.html")
    print(f"sweep report: {time.perf_counter() - t0:.1f} s")
    return out


# --- the HTML itself -----------------------------------------------------------------------------


def test_run_report_has_scenario_flows_and_figures(run_html):
    html = run_html.read_text()
    page = parse(html)
    assert page.figures == ["goodput", "delay", "queue"]  # no TCP flow: no cwnd figure, a note instead
    assert "cwnd: not drawn: no cwnd samples: flows &#x27;load&#x27; and &#x27;voip&#x27; are UDP flows (no congestion window)" in html
    assert {"run", "flows", "figures", "scenario", "drops"} <= set(page.sections)
    assert page.external == [] and page.scripts == 0
    assert all(img["src"].startswith("data:image/svg+xml;base64,") for img in page.images)
    # the scenario as TOML text, and the flow table with units
    assert 'kind = "droptail"' in html and 'limit = "20000B"' in html and "[[flows]]" in html
    assert re.search(r"<td>voip</td>", html) and "Mbit/s" in html and " ms<" in html


def test_run_report_with_tcp_state_draws_cwnd(run_dir, tmp_path):
    """A run with TCP state samples (cwnd table) gets the cwnd figure too."""
    import numpy as np
    import pandas as pd

    from ccbench.report import run_report_html
    from ccbench.run import Run

    run = Run.load(run_dir)
    t = np.linspace(0, 2, 50)
    run.cwnd = pd.DataFrame({"flow": ["x"] * 50, "t": t, "cwnd_pkts": 10 + t, "ssthresh_pkts": np.full(50, 2e9)})
    page = parse(run_report_html(run))
    assert page.figures == ["goodput", "delay", "cwnd", "queue"]


def test_sweep_report_has_one_figure_per_metric_and_parameter(sweep_html):
    html = sweep_html.read_text()
    page = parse(html)
    expected = {f"{m}__{a}" for m in SWEPT_METRICS for a in AXES}
    assert set(page.figures) == expected and len(page.figures) == len(expected)
    assert page.external == [] and page.scripts == 0
    assert {"sweep", "summary", "errors", "figures", "rows", "spec"} <= set(page.sections)
    # the summary table: a row per combination (6 ok) and flow (2), medians over 2 seeds
    summary = html.split('id="summary"')[1].split("</table>")[0]
    assert summary.count("<tr>") == 1 + 6 * 2
    assert "report test" in html
    # the failed points, with their message
    errors = html.split('id="errors"')[1].split("</section>")[0]
    assert errors.count('<tr class="error">') == 4 and "&quot;-1B&quot;" in errors


def test_sweep_report_error_bars_are_median_and_min_max(sweep_dir):
    """The plotted numbers: median with min-max over seeds, per x value and group."""
    import numpy as np

    from ccbench.report.sweep_report import metric_figure
    from ccbench.sweep import SweepStore

    store = SweepStore(sweep_dir)
    meta = store.read_meta()
    df = store.summary()
    ok = df[df.status == "ok"]
    fig = metric_figure(ok, meta, [AXES[0]], "delay_p95_s")
    ax = fig.axes[1]  # panel of flow "voip"
    assert ax.get_title() == "voip"
    from matplotlib.container import BarContainer, ErrorbarContainer

    # "-1B" failed at every point: it is left off the axis, so the sizes that remain
    # make a numeric scale (a line per rule), not categories
    container = ax.containers[0]  # group rule = bytes-strict (first value)
    assert isinstance(container, ErrorbarContainer) and not any(isinstance(c, BarContainer) for c in ax.containers)
    x, y = container.lines[0].get_data()
    assert list(x) == [10000.0, 20000.0, 40000.0]
    sel = ok[(ok.flow == "voip") & (ok[AXES[1]] == "bytes-strict")]
    for i, lim in enumerate(["10000B", "20000B", "40000B"]):
        v = sel[sel[AXES[0]] == lim]["delay_p95_s"].to_numpy() * 1e3
        assert y[i] == pytest.approx(np.median(v))
    segs = container.lines[2][0].get_segments()
    lo_hi = [(s[0][1], s[1][1]) for s in segs]
    for i, lim in enumerate(["10000B", "20000B", "40000B"]):
        v = sel[sel[AXES[0]] == lim]["delay_p95_s"].to_numpy() * 1e3
        assert lo_hi[i] == pytest.approx((v.min(), v.max()))


def test_report_cli_and_errors(run_dir, sweep_dir, tmp_path, cli):
    r = cli("report", str(run_dir))
    assert r.returncode == 0, r.stderr
    assert (run_dir / "report.html").exists() and "wrote" in r.stdout
    r = cli("report", str(sweep_dir), "--out", str(tmp_path / "x" / "s.html"), "--format", "png", "--metric", "loss_rate")
    assert r.returncode == 0, r.stderr
    page = parse((tmp_path / "x" / "s.html").read_text())
    assert sorted(page.figures) == sorted(f"loss_rate__{a}" for a in AXES)
    assert all(i["src"].startswith("data:image/png;base64,") for i in page.images)
    r = cli("report", str(tmp_path))
    assert r.returncode == 2 and "is neither a run directory" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = cli("report", str(sweep_dir), "--metric", "speed")
    assert r.returncode == 2 and r.stderr.startswith("error: --metric: 'speed' is not a column of the summary (accepted: ")


# --- in a browser --------------------------------------------------------------------------------

CHECK_SCRIPT = """<script>
window.addEventListener('load', function () {
  var imgs = document.querySelectorAll('img'), broken = 0, sizes = [];
  imgs.forEach(function (i) { if (!i.complete || i.naturalWidth === 0) broken++; sizes.push(i.naturalWidth); });
  var d = document.createElement('div');
  d.id = 'ccbench-check';
  d.setAttribute('data-images', imgs.length);
  d.setAttribute('data-broken', broken);
  d.setAttribute('data-min-width', Math.min.apply(null, sizes.concat([99999])));
  document.body.appendChild(d);
});
</script>"""


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def browse(html_path: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    exe = chromium()
    if exe is None:
        print("SKIP: chromium is not installed (apt-get install -y chromium)")
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium)")
    cmd = [
        exe, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--disable-dev-shm-usage",
        f"--user-data-dir={tmp / 'chromium-profile'}", "--virtual-time-budget=20000", "--enable-logging=stderr", "--v=0",
        *args, html_path.resolve().as_uri(),
    ]
    env = dict(os.environ, HOME=str(tmp))
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env)


def console_errors(stderr: str) -> list[str]:
    return [l for l in stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l or "Failed to load resource" in l
            or "ERR_FILE_NOT_FOUND" in l]


@pytest.mark.parametrize("kind", ["run", "sweep"])
def test_report_renders_in_headless_chromium(kind, run_html, sweep_html, tmp_path):
    report = run_html if kind == "run" else sweep_html
    n_fig = len(parse(report.read_text()).figures)
    assert n_fig >= 2

    # 1. the DOM after load: every figure is there, and no image is broken
    checked = tmp_path / f"{kind}-checked.html"
    checked.write_text(report.read_text().replace("</body>", CHECK_SCRIPT + "\n</body>"))
    t0 = time.perf_counter()
    r = browse(checked, tmp_path, "--dump-dom")
    print(f"chromium --dump-dom ({kind}): {time.perf_counter() - t0:.1f} s")
    assert r.returncode == 0, r.stderr[-2000:]
    m = re.search(r'id="ccbench-check" data-images="(\d+)" data-broken="(\d+)" data-min-width="(\d+)"', r.stdout)
    assert m, "the load-time check did not run:\n" + r.stdout[-500:]
    images, broken, min_width = map(int, m.groups())
    assert images == n_fig and broken == 0 and min_width > 200
    dom = parse(r.stdout)
    assert len(dom.figures) == n_fig
    assert console_errors(r.stderr) == []

    # 2. a screenshot: not blank, and the plot lines (matplotlib's blue) are visible
    shot = tmp_path / f"{kind}.png"
    r = browse(report, tmp_path, f"--screenshot={shot}", "--window-size=1280,2400")
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    assert console_errors(r.stderr) == []
    from PIL import Image
    import numpy as np

    img = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    assert img.shape[0] >= 2000 and img.shape[1] >= 1200
    non_white = (img.sum(axis=2) < 3 * 240).mean()
    assert non_white > 0.02, f"the screenshot is (almost) blank: {non_white:.3%} non-white"
    packed = (img[..., 0] << 16) | (img[..., 1] << 8) | img[..., 2]
    assert len(np.unique(packed)) > 50
    blue = (np.abs(img - np.array([31, 119, 180])).sum(axis=2) < 40).sum()
    assert blue > 200, f"no plot line colour in the screenshot ({blue} px)"
