"""Phones and tablets (390x844 and 768x1024, touch): no page or embed scrolls sideways, the chart is on the first
screen, the menu and the settings toggle work by touch and keyboard, charts follow the window, and the QR panel
shows this page's address (settings included) as a QR code of exactly that address.

Screenshots of the first screen of every page land in artifacts/screenshots/phone/ for a person to look at.
"""

from __future__ import annotations

import re
import urllib.parse
import urllib.request

import pytest
import segno

from tests.browser.conftest import SCREENSHOTS
from tests.browser.screens import page_screens, with_lang
from tests.test_room import matrix_modules, svg_modules

CHART_VISIBLE_PX = 120  # at least this much of the first chart (its title and legend) on the first screen
CHART_FOLLOWED = """() => [...document.querySelectorAll('[data-chart]')].every((chart) =>
    Math.abs(chart.querySelector('.main-svg, .slide-table').getBoundingClientRect().width - chart.clientWidth) < 2)"""


def first_screen_shot(watch, name: str) -> None:
    folder = SCREENSHOTS / "phone"
    folder.mkdir(parents=True, exist_ok=True)
    watch.page.screenshot(path=str(folder / f"{name}.png"))


def shot_name(path: str, lang: str, device: str) -> str:
    return (re.sub(r"[^a-z0-9]+", "-", path.split("?")[0].lower()).strip("-") or "home") + f"-{lang}-{device}"


@pytest.mark.parametrize("path,charts,lang,device", page_screens(("phone", "tablet")))
def test_fits_the_screen_and_shows_the_chart_first(open_device, path, charts, lang, device):
    watch = open_device(device)
    watch.open(with_lang(path, lang), charts)
    page = watch.page
    width, height = page.viewport_size["width"], page.viewport_size["height"]
    assert page.evaluate("document.documentElement.scrollWidth") <= width, "the page scrolls sideways"
    assert page.evaluate("document.body.scrollWidth") <= width
    top = page.evaluate("document.querySelector('[data-chart]').getBoundingClientRect().top")
    assert top <= height - CHART_VISIBLE_PX, f"the chart starts at {top:.0f} px of a {height} px screen"
    for chart in charts:
        box = page.locator(f"[data-chart='{chart}'] :is(.main-svg, .slide-table)").first.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, f"{chart} is wider than the screen"
    if not path.startswith("/embed/"):
        assert page.is_visible("#menu-toggle") and not page.is_visible("#site-nav")
        if page.locator("#settings-toggle").count():
            assert page.is_visible("#settings-toggle") and not page.is_visible("#controls")
    first_screen_shot(watch, shot_name(path, lang, device))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_desktop_shows_navigation_and_settings_without_toggles(open_device, lang):
    watch = open_device("desktop")
    watch.open(with_lang("/norms", lang), ("norms",))
    page = watch.page
    assert page.is_visible("#controls") and page.is_visible("#room-open") and not page.is_visible("#settings-toggle")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    # From a tablet to a wide projector the links either fit on one row or fold: never wrap, never overflow.
    # (At 1280 px they fit today in both languages, the QR button icon-only in English; one more page would fold them.)
    for width in (920, 1000, 1100, 1200, 1280, 1600):
        page.set_viewport_size({"width": width, "height": 800})
        page.wait_for_function(f"() => document.documentElement.clientWidth === {width}")
        page.wait_for_function(CHART_FOLLOWED)  # the chart has followed its box
        page.wait_for_timeout(50)  # the header is measured on the next animation frame
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.locator("header.site").bounding_box()["height"] < 60, f"the header wraps at {width} px"
        assert page.is_visible("#site-nav") != page.is_visible("#menu-toggle")
        assert page.is_visible("#room-open") and page.evaluate(
            "document.getElementById('room-open').textContent.trim()"
        )
    assert page.is_visible("#site-nav") and not page.is_visible("#menu-toggle")  # 1600 px: every link shows


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_menu_opens_by_touch_and_keyboard_and_escape_closes_it(open_device, lang):
    watch = open_device("phone")
    watch.open(with_lang("/gradients?sweep_to=12", lang), ("grad-profile",))
    page = watch.page
    button = page.locator("#menu-toggle")
    assert button.get_attribute("aria-expanded") == "false" and button.get_attribute("aria-controls") == "site-nav"
    button.tap()
    assert button.get_attribute("aria-expanded") == "true"
    links = page.locator("#site-nav a")
    assert links.count() >= 9 and all(links.nth(i).is_visible() for i in range(links.count()))
    for i in range(links.count()):  # each link a finger-sized target inside the screen
        box = links.nth(i).bounding_box()
        assert box["height"] >= 44 and box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.keyboard.press("Escape")
    assert button.get_attribute("aria-expanded") == "false" and not page.is_visible("#site-nav")
    assert page.evaluate("document.activeElement.id") == "menu-toggle"
    page.keyboard.press("Enter")  # the focused button opens it again
    assert page.is_visible("#site-nav")
    page.keyboard.press("Tab")  # and Tab walks into the links
    assert page.evaluate("document.activeElement.closest('#site-nav') !== null")
    page.locator("h1").tap()  # a tap elsewhere closes it
    assert not page.is_visible("#site-nav")
    button.tap()
    page.locator("#site-nav a[data-nav='norms']").tap()
    page.wait_for_url(re.compile(r"/norms\?"))
    watch.wait_ready(("norms",))
    assert page.get_attribute("#site-nav a[data-nav='norms']", "aria-current") == "page"
    assert page.get_attribute("#menu-toggle", "aria-expanded") == "false"  # a new page starts with the menu shut


def test_settings_toggle_folds_the_panel_and_a_setting_still_redraws_the_chart(open_device):
    watch = open_device("phone")
    watch.open("/norms?lang=zh", ("norms",))
    page = watch.page
    toggle = page.locator("#settings-toggle")
    assert toggle.inner_text().strip() == "设置" and toggle.get_attribute("aria-expanded") == "false"
    toggle.tap()
    assert toggle.get_attribute("aria-expanded") == "true" and page.is_visible("#controls")
    drawn = watch.drawn("norms")
    page.select_option("#ctl-norm_position", "post")
    page.wait_for_function(f"() => Number(document.querySelector('[data-chart=norms]').dataset.drawn) > {drawn}")
    assert "norm_position=post" in page.url
    stream = watch.figure("norms")["data"][0]["y"]
    assert all(abs(v - 8.0) < 8e-3 for v in stream[1:])  # Post-LN: every token pinned to length sqrt(64) = 8
    toggle.tap()
    assert not page.is_visible("#controls")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_touch_targets_are_finger_sized(open_device):
    watch = open_device("phone")
    watch.open("/layernorm", ("layernorm",))
    page = watch.page
    page.tap("#settings-toggle")
    page.click("details.classroom summary")
    small = page.evaluate("""() => [...document.querySelectorAll('button, select, input, summary, header a')]
        .filter((el) => el.checkVisibility() && el.type !== 'hidden')
        .map((el) => el.closest('label') || el)   // a box inside its label: the label is what a finger hits
        .map((el) => ({ what: el.id || el.textContent.trim().slice(0, 30) || el.tagName, h: el.getBoundingClientRect().height }))
        .filter((t) => t.h < 44)""")
    assert not small, f"targets under 44 px high: {small}"


def test_slider_follows_a_finger(open_device):
    watch = open_device("phone")
    watch.open("/softmax", ("softmax-probs",))
    page = watch.page
    slider = page.locator("#slider-scale")
    before = slider.input_value()
    drawn = watch.drawn("softmax-probs")
    box = slider.bounding_box()
    page.touchscreen.tap(box["x"] + box["width"] * 0.95, box["y"] + box["height"] / 2)
    page.wait_for_function(
        f"() => Number(document.querySelector('[data-chart=\"softmax-probs\"]').dataset.drawn) > {drawn}"
    )
    assert float(slider.input_value()) > float(before)
    scale = float(urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)["scale"][0])
    assert scale == pytest.approx(10 ** float(slider.input_value()), rel=0.01)  # the slider moves log10(scale)


def test_a_swipe_over_a_chart_scrolls_the_page(open_device):
    """Plotly's drag-to-zoom would swallow the swipe; on touch screens charts leave it to the page."""
    watch = open_device("phone")
    watch.open("/norms", ("norms",))
    page = watch.page
    box = page.locator("[data-chart='norms'] .nsewdrag").bounding_box()  # Plotly's drag surface over the plot
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.6
    session = page.context.new_cdp_session(page)
    session.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for step in range(1, 16):  # a finger moving 300 px up
        session.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y - 20 * step}]})
    session.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    page.wait_for_function("() => window.scrollY > 100")
    assert page.evaluate("document.querySelector('[data-chart=norms]')._fullLayout.dragmode") is False
    box = page.locator("[data-chart='norms'] .nsewdrag").bounding_box()
    page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)  # a tap still reads a point
    page.wait_for_function(  # the series name as legible.js typesets it
        "() => document.querySelector('[data-chart=norms] .hoverlayer').textContent.includes('‖xₗ‖')"
    )


def test_charts_follow_the_window(open_device):
    watch = open_device("desktop")
    watch.open("/norms", ("norms",))
    page = watch.page
    drawn = watch.drawn("norms")
    asked = []

    def on_request(request) -> None:
        if "/api/" in request.url:
            asked.append(request.url)

    page.on("request", on_request)
    plot_width = "() => document.querySelector('[data-chart=norms] .main-svg').getBoundingClientRect().width"
    wide = page.evaluate(plot_width)
    page.set_viewport_size({"width": 700, "height": 900})
    page.wait_for_function(CHART_FOLLOWED)
    narrow = page.evaluate(plot_width)
    assert narrow < wide - 200
    assert watch.drawn("norms") == drawn and asked == []  # a resize is not a new draw, and asks the server nothing
    title = page.evaluate("document.querySelector('[data-chart=norms]').layout.title.text")
    assert title.count("<br>") == 0 or narrow < 500  # wrapped only where it does not fit
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_function("() => document.querySelector('[data-chart=norms]').layout.title.text.includes('<br>')")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


# ---- Show the room -------------------------------------------------------------------------------------


def qr_svg(live_server: str, src: str) -> str:
    with urllib.request.urlopen(live_server + src, timeout=30) as response:
        return response.read().decode()


def open_room(page) -> dict:
    """Tap the QR button; wait for the panel; return what it shows."""
    page.click("#room-open")
    page.wait_for_selector("#room[data-ready='1'] #room-qr:not([hidden])")
    return page.evaluate("""() => { const d = document.getElementById('room'), img = document.getElementById('room-qr');
        const box = d.getBoundingClientRect();
        return { address: d.dataset.address, text: d.querySelector('#room-url').textContent, src: img.getAttribute('src'),
                 alt: img.alt, loaded: img.complete && img.naturalWidth > 0, warning: d.querySelector('#room-warning').hidden ? '' :
                 d.querySelector('#room-warning').textContent, note: d.querySelector('#room-note').textContent,
                 focused: document.activeElement.id, width: box.width, height: box.height,
                 urlFont: parseFloat(getComputedStyle(d.querySelector('.room-url-base')).fontSize) }; }""")


def assert_qr_encodes(live_server: str, shown: dict, address: str) -> None:
    assert shown["address"] == address and shown["text"] == address and address in shown["alt"]
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(shown["src"]).query)["url"] == [address]
    assert shown["loaded"]
    side, dark = svg_modules(qr_svg(live_server, shown["src"]))
    reference = segno.make_qr(address, error="m")
    assert side == reference.symbol_size(border=4)[0]  # the QR's module count, quiet zone included
    assert dark == matrix_modules(reference)  # the code of exactly this address


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_room_panel_on_a_loopback_server_shows_the_page_and_says_phones_cannot_reach_it(open_device, live_server, lang):
    watch = open_device("phone")
    watch.open(with_lang("/norms", lang), ("norms",))
    page = watch.page
    page.tap("#settings-toggle")
    page.select_option("#ctl-norm_position", "post")
    page.wait_for_function("() => location.search.includes('norm_position=post')")
    shown = open_room(page)
    assert_qr_encodes(live_server, shown, page.url)
    assert "norm_position=post" in shown["address"]  # every setting travels with the code
    assert "--host 0.0.0.0" in shown["warning"]
    assert ("手机" in shown["warning"]) == (lang == "zh")
    assert shown["focused"] == "room-close"
    assert shown["width"] >= 389 and shown["height"] >= 843  # full screen
    first_screen_shot(watch, f"room-loopback-{lang}-phone")
    page.keyboard.press("Escape")
    assert not page.is_visible("#room")
    assert page.evaluate("document.activeElement.id") == "room-open"


def test_room_panel_on_all_interfaces_shows_the_lan_address_large(open_device, live_server):
    """/api/room answered as by a server started with --host 0.0.0.0 on a laptop with two networks."""
    watch = open_device("desktop")
    lan = {
        "urls": ["http://192.168.1.23:8123", "http://10.0.0.7:8123"],
        "public_url": None,
        "listening_on_all_interfaces": True,
        "loopback_only": False,
        "in_container": False,
    }
    watch.page.route("**/api/room", lambda route: route.fulfill(json=lan))
    watch.open("/compare?depth=6", ("compare",))
    page = watch.page
    path = page.url.split("127.0.0.1", 1)[1].split("/", 1)[1]
    shown = open_room(page)
    assert_qr_encodes(live_server, shown, f"http://192.168.1.23:8123/{path}")
    assert shown["warning"] == "" and "same network" in shown["note"]
    assert shown["urlFont"] >= 40  # large type on a 1280 px projector
    first_screen_shot(watch, "room-lan-en-desktop")
    page.click("#room-others button")  # the other network's address
    page.wait_for_function("() => document.getElementById('room').dataset.address.startsWith('http://10.0.0.7:8123/')")
    page.click("#room-close")
    assert not page.is_visible("#room") and page.evaluate("document.activeElement.id") == "room-open"


def test_public_url_wins_and_a_page_opened_by_its_lan_address_keeps_it(open_device, live_server):
    watch = open_device("tablet")
    public = {
        "urls": ["https://resnorm.example.org"],
        "public_url": "https://resnorm.example.org",
        "listening_on_all_interfaces": True,
        "loopback_only": False,
        "in_container": True,
    }
    watch.page.route("**/api/room", lambda route: route.fulfill(json=public))
    watch.open("/chain?lang=zh&derivative=1.1", ("chain",))
    shown = open_room(watch.page)
    assert_qr_encodes(live_server, shown, "https://resnorm.example.org/chain?lang=zh&derivative=1.1")
    assert "RESNORM_PUBLIC_URL" in shown["note"] and shown["warning"] == ""
    kept = watch.page.evaluate("""async () => { const { roomAddress } = await import('/static/js/room.js');
        return roomAddress(new URL('http://192.168.1.5:8000/norms?depth=6'), { urls: ['http://10.0.0.7:8000'], public_url: null }); }""")
    assert kept == "http://192.168.1.5:8000/norms?depth=6"  # already reachable: not rewritten
