"""Render the audit's HTML report in headless Chromium: a screenshot, and a layout check.

    .venv/bin/python bench/html_layout.py [LOG] [--out docs/audit_report.png]

Needs Debian's ``chromium`` package (``apt-get install chromium``). The report itself has no
script; a copy of it gets one that measures every SVG text's box once the page has laid out
and writes the problems it finds into the page, which ``--dump-dom`` prints: a text outside
its SVG's box, or two texts of one SVG that overlap. Exit code 1 when there is any.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from prefixlint.auditing import AuditOptions, run_audit  # noqa: E402
from prefixlint.auditing.report_html import render_html  # noqa: E402

DEFAULT_LOG = "fixtures/logs/tau_openai_breakers.jsonl"  # relative to the checkout
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]
MEASURE = """<script>
window.addEventListener("load", () => {
  const problems = [];
  document.querySelectorAll("svg").forEach((svg, index) => {
    const box = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll("text")]
      .map(t => [t.textContent, t.getBoundingClientRect()]);
    for (const [label, r] of texts) {
      const outside = r.left < box.left - 1 || r.right > box.right + 1 ||
                      r.top < box.top - 1 || r.bottom > box.bottom + 1;
      if (outside) problems.push(`svg ${index}: '${label}' outside its box`);
    }
    for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
      const [a, ra] = texts[i], [b, rb] = texts[j];
      const overlap = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left) > 1 &&
                      Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top) > 1;
      if (overlap) problems.push(`svg ${index}: '${a}' overlaps '${b}'`);
    }
  });
  const out = document.createElement("pre");
  out.id = "layout";
  out.textContent = JSON.stringify(problems);
  document.body.appendChild(out);
});
</script>"""


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        sys.exit("needs Chromium: apt-get install chromium")
    return found


def layout_problems(html: str, browser: str, folder: Path) -> list[str]:
    page = folder / "measure.html"
    page.write_text(html.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = subprocess.run(
        [browser, *FLAGS, f"--user-data-dir={folder / 'profile'}", "--virtual-time-budget=5000",
         "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    start = dom.index('<pre id="layout">') + len('<pre id="layout">')
    return json.loads(dom[start : dom.index("</pre>", start)].replace("&amp;", "&"))


def screenshot(html: str, browser: str, folder: Path, out: Path) -> None:
    page = folder / "report.html"
    page.write_text(html, encoding="utf-8")
    subprocess.run(
        [browser, *FLAGS, f"--user-data-dir={folder / 'profile'}", "--window-size=900,1400",
         f"--screenshot={out}", page.as_uri()],
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", nargs="?", default=DEFAULT_LOG)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "audit_report.png")
    args = parser.parse_args()
    os.chdir(ROOT)
    report = run_audit([args.log], AuditOptions(caches=("vllm", "openai")))
    html = render_html(report)
    browser = chromium()
    with tempfile.TemporaryDirectory() as folder:
        problems = layout_problems(html, browser, Path(folder))
        screenshot(html, browser, Path(folder), args.out.resolve())
    print(f"screenshot: {args.out}")
    for problem in problems:
        print(f"layout: {problem}")
    print(f"{len(problems)} layout problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
