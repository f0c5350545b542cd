"""axe-core (Deque's accessibility engine, the npm package in tests/browser/package.json) on every page and every
embed, in English and Chinese, at desktop and phone sizes (each page in English on a desktop and in Chinese on a
phone, the deck and /models in both on both), plus the open menu and the open QR panel: zero
violations of its default rule set (WCAG 2.x A and AA, best practices) and of the WCAG 2.2 target-size rule.

`make test` installs it (`npm ci` in tests/browser); without it the tests skip locally and FAIL in CI.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.browser.screens import page_screens, with_lang

AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
# axe's defaults, plus target-size (WCAG 2.2 AA 2.5.8, off by default): fingers in the room need room.
RUN_AXE = """async () => {
  const result = await axe.run(document, { rules: { 'target-size': { enabled: true } }, resultTypes: ['violations'] });
  return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 4).map((n) => `${n.target.join(' ')}: ${n.failureSummary}`) }));
}"""


@pytest.fixture(scope="session")
def axe_path() -> str:
    if not AXE.exists():
        message = f"axe-core missing at {AXE}: run `npm ci` in tests/browser"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return str(AXE)


def violations(watch, axe_path: str) -> list[dict]:
    watch.page.add_script_tag(path=axe_path)  # the context bypasses the page's CSP, which forbids inline scripts
    return watch.page.evaluate(RUN_AXE)


def report(found: list[dict]) -> str:
    return "\n".join(f"{v['id']} ({v['impact']}): {v['help']}\n    " + "\n    ".join(v["nodes"]) for v in found)


# Every page in English on a desktop and in Chinese on a phone; the deck and /models (the most markup, the most
# states) in both languages on both. Each page still meets both languages on both screens in the legibility and
# phone-fit tests.
@pytest.mark.parametrize("path,charts,lang,device", page_screens(("desktop", "phone"), crossed=("/lecture", "/models")))
def test_no_axe_violations(open_device, axe_path, path, charts, lang, device):
    watch = open_device(device, bypass_csp=True)
    watch.open(with_lang(path, lang), charts)
    found = violations(watch, axe_path)
    assert not found, f"{path} ({lang}, {device}):\n{report(found)}"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_open_menu_settings_and_qr_panel_have_no_axe_violations(open_device, axe_path, lang):
    watch = open_device("phone", bypass_csp=True)
    watch.open(with_lang("/norms", lang), ("norms",))
    watch.page.click("#menu-toggle")
    watch.page.click("#settings-toggle")
    found = violations(watch, axe_path)
    assert not found, f"menu and settings open ({lang}):\n{report(found)}"
    watch.page.click("#room-open")
    watch.page.wait_for_selector("#room[data-ready='1'] #room-qr:not([hidden])")
    found = violations(watch, axe_path)
    assert not found, f"QR panel open ({lang}):\n{report(found)}"
