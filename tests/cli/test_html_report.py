"""The HTML report read as a picture (issue 38, criterion 5): rendered by headless Chromium at
1,280 px, the page has no horizontal overflow, Table 3 fits (each CI on a second line of its
cell), and the empty sections are one "Not computable here, and why" list at the top.

Chromium is Debian's `chromium` (`apt-get install -y chromium`); without it the browser test
skips, saying so. The report is the real `paw report` of an audit run by the real engine on
the fake backend (tests/cli/conftest.py)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from analysis.common.render import html_cell, is_empty, render_html
from tests.cli.test_flips_cli import paw

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
MEASURE = """<script>
window.addEventListener("load", () => {
  const page = document.documentElement;
  const widths = [...document.querySelectorAll("table")].map(t => t.scrollWidth);
  const boxes = [...document.querySelectorAll("div.table")].map(d => d.clientWidth);
  const t3 = [...document.querySelectorAll("h2")].find(h => h.textContent.startsWith("Table 3"));
  const table3 = t3 ? t3.nextElementSibling.querySelector("table").scrollWidth : -1;
  document.title = JSON.stringify({page: page.scrollWidth, view: window.innerWidth,
                                   tables: widths, boxes: boxes, table3: table3});
});
</script>"""


def chromium_measure(html_file: Path, width: int = 1280) -> dict:
    """Load the page at `width` px in headless Chromium; what the MEASURE script found."""
    import json

    probe = html_file.with_name(html_file.stem + "-probe.html")
    probe.write_text(html_file.read_text("utf-8").replace("</body>", MEASURE + "</body>"),
                     encoding="utf-8")
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--window-size={width},900", "--virtual-time-budget=3000", "--dump-dom",
         probe.as_uri()], capture_output=True, text=True, timeout=120)
    title = re.search(r"<title>(.*?)</title>", done.stdout, re.S)
    assert title and title.group(1).startswith("{"), done.stderr[-2000:]
    import html as htmllib

    return json.loads(htmllib.unescape(title.group(1)))


@pytest.fixture
def report_html(fake_audit, tmp_path, capsys) -> Path:
    path, outcome = fake_audit
    out = tmp_path / "report.html"
    code, _, err = paw(capsys, "report", "--audit", outcome.audit, "--out", str(out),
                       "--n-boot", "50", "--db", path)
    assert code == 0, err
    return out


def test_ci_on_a_second_line_and_empty_tables_listed_once(report_html):
    text = report_html.read_text("utf-8")
    assert '<h2>Not computable here, and why</h2>' in text
    listed = text.split('<section class="empty">')[1].split("</section>")[0]
    headings = re.findall(r"<h2>(.*?)</h2>", text)
    # Every collapsed table is named once in the list and has no heading of its own.
    collapsed = re.findall(r"<li><b>(.*?)</b>: ", listed)
    assert collapsed and not set(collapsed) & set(headings[1:])
    assert all(re.search(r"</b>: (it has no|every cell)", li)
               for li in re.findall(r"<li>.*?</li>", listed))
    table3 = text.split("<h2>Table 3")[1].split("</table>")[0]
    assert '<br><span class="ci">[' in table3


def test_cells_and_emptiness():
    assert html_cell("0.52 [0.45, 0.60] ⁿ⁼⁶") == \
        '0.52 ⁿ⁼⁶<br><span class="ci">[0.45, 0.60]</span>'
    assert html_cell("A<B") == "A&lt;B"
    assert is_empty(pd.DataFrame()) and is_empty(pd.DataFrame({"x": []}))
    assert is_empty(pd.DataFrame({"x": [float("nan")]}))
    assert not is_empty(pd.DataFrame({"x": [0.5, float("nan")]}))
    html = render_html("t", {}, [])
    assert "Not computable" not in html
    from analysis.common.render import html_table

    rows = pd.DataFrame({"x": [0.5, float("nan"), float("nan")], "y": [0.1, float("nan"), 0.2]},
                        index=pd.Index(["a", "b", "c"], name="row"))
    table = html_table(rows)
    assert "<th>a</th>" in table and "<th>c</th>" in table and "<th>b</th>" not in table
    assert table.endswith('<p class="note">Not computable here (every cell –): b.</p>')


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                    "(apt-get install -y chromium): the report cannot be measured as a page")
def test_no_horizontal_overflow_at_1280_px_in_chromium(report_html):
    found = chromium_measure(report_html, 1280)
    assert found["view"] == 1280
    assert found["page"] <= found["view"], found  # no horizontal scrollbar on the page
    # Table 3 fits its box whole (no column cut, no scrollbar of its own).
    assert 0 < found["table3"] <= min(found["boxes"]), found
