"""The report in a real browser: headless Chromium loads it without console errors, draws every
image, shows every section, and leaves a screenshot in tests/artifacts/report.png.

Chromium is Debian's ``chromium``; ``ensure_chromium.sh`` installs it when missing (as root).
Console messages come from Chromium's own log (``--enable-logging=stderr``), the rendered DOM
from ``--dump-dom``; a copy of the report gets a small checker script that records, after load,
how many images decoded and whether the page overflows the window sideways.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
ARTIFACTS = HERE.parent / "artifacts"
WINDOW = (1280, 2000)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    f"--window-size={WINDOW[0]},{WINDOW[1]}",
    # any attempt to reach the network fails instead of waiting: the page must not need it
    "--host-resolver-rules=MAP * ~NOTFOUND",
]
CONSOLE = re.compile(r":CONSOLE(?::\d+|\(\d+\))\]\s*(.*)")

CHECKER = """<script>
window.addEventListener("load", () => {
  const images = Array.from(document.images);
  const data = document.body.dataset;
  data.images = images.length;
  data.decoded = images.filter((i) => i.complete && i.naturalWidth > 0).length;
  data.overflow = document.documentElement.scrollWidth > window.innerWidth ? "yes" : "no";
});
</script>
"""


@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
    )
    if found is None:
        setup = subprocess.run(
            ["sh", str(HERE / "ensure_chromium.sh")], capture_output=True, text=True, timeout=900
        )
        found = shutil.which("chromium")
        if found is None:
            pytest.fail(
                f"headless Chromium is needed for the browser check: {setup.stderr.strip()}"
            )
    return found


def run_chromium(binary: str, page: Path, tmp: Path, *args: str) -> tuple[str, list[str]]:
    """Chromium's stdout and the console messages the page logged."""
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    result = subprocess.run(
        [
            binary,
            *FLAGS,
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            *args,
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    console = [m.group(1) for line in result.stderr.splitlines() if (m := CONSOLE.search(line))]
    return result.stdout, console


def load(binary: str, html: Path, tmp: Path) -> tuple[dict[str, str], str, list[str]]:
    """Load a checker-instrumented copy of ``html``: its body data, the DOM, console messages."""
    copy = tmp / f"checked-{html.name}"
    copy.write_text(html.read_text(encoding="utf-8").replace("</body>", CHECKER + "</body>"))
    dom, console = run_chromium(binary, copy, tmp, "--dump-dom")
    body = re.search(r"<body([^>]*)>", dom)
    assert body is not None, dom[:500]
    data = dict(re.findall(r'data-(\w+)="([^"]*)"', body.group(1)))
    return data, dom, console


def test_report_loads_cleanly_in_chromium(chromium, report_file, parse_page, tmp_path):
    data, dom, console = load(chromium, report_file, tmp_path)
    assert console == []
    assert data == {"images": "3", "decoded": "3", "overflow": "no"}
    page = parse_page(dom)
    assert list(page.sections) == ["summary", "step-world", "step-scores", "run"]
    assert page.sections["step-world"] == "Knowledge graph: world"
    assert len([i for i in page.images if i["src"].startswith("data:image/png;base64,")]) == 3
    assert page.table("Relations")["rows"][0][:2] == ["P108", "employer"]


def test_screenshot_is_kept_as_an_artifact(chromium, report_file, tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report.png"
    shot.unlink(missing_ok=True)
    run_chromium(chromium, report_file, tmp_path, f"--screenshot={shot}")
    pixels = imread(shot)
    assert pixels.shape[:2] == (WINDOW[1], WINDOW[0])
    # a real page, not a blank or error screen: many distinct colours (text, plots, tables)
    colours = np.unique((pixels[..., :3] * 255).astype(np.uint8).reshape(-1, 3), axis=0)
    assert len(colours) > 200


def test_the_check_catches_console_errors_and_broken_images(chromium, tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><body><img src="missing.png" alt="gone">'
        '<script>console.error("boom"); notDefined();</script></body></html>'
    )
    data, _, console = load(chromium, bad, tmp_path)
    assert data == {"images": "1", "decoded": "0", "overflow": "no"}
    assert console[0].startswith('"boom"')
    assert "Uncaught ReferenceError: notDefined is not defined" in console[1]
