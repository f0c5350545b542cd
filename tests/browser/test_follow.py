"""Follow the lecturer in Chromium: the deck's QR panel opens a follow session and shows the follow link (the room id,
never the key) and the key on the lecturer's screen alone; a phone that opens the link moves when the lecturer
presses the next key, and again after its connection was cut. Screenshots in artifacts/screenshots/follow/."""

from __future__ import annotations

import pytest

from app.experiments.lecture import DECK
from tests.browser.conftest import SCREENSHOTS

SHOTS = SCREENSHOTS / "follow"


def start_following(lecturer) -> tuple[str, str]:
    """Open the QR panel on the lecturer's deck, let phones follow: (room, the follow link the panel shows)."""
    lecturer.page.keyboard.press("q")
    lecturer.page.wait_for_selector("#room[data-ready='1']", state="attached", timeout=30_000)
    lecturer.page.click("#room-follow-start")
    lecturer.page.wait_for_function("() => document.body.dataset.followRoom")
    lecturer.page.wait_for_function("() => document.getElementById('room').dataset.address.includes('follow=')")
    lecturer.page.wait_for_selector("#room[data-ready='1']", state="attached", timeout=30_000)
    room = lecturer.page.evaluate("() => document.body.dataset.followRoom")
    return room, lecturer.page.get_attribute("#room", "data-address")


def slide_of(watch) -> str:
    return watch.page.evaluate("() => document.body.dataset.slide")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_phone_follows_the_lecturers_next_key(open_device, lang):
    lecturer = open_device("desktop")
    n = next(i for i, s in enumerate(DECK, start=1) if s["id"] == "layernorm")  # and two slides that do not ask first
    assert not any(s.get("predict") for s in DECK[n - 1 : n + 2])
    lecturer.open(f"/lecture?slide={n}&lang={lang}")
    room, link = start_following(lecturer)
    key = lecturer.page.evaluate("() => JSON.parse(sessionStorage.getItem('resnorm-follow')).key")
    assert f"follow={room}" in link and key not in link and "slide=" not in link
    assert key in lecturer.page.text_content("#room-follow-key")
    SHOTS.mkdir(parents=True, exist_ok=True)
    lecturer.page.screenshot(path=str(SHOTS / f"panel-{lang}.png"))
    lecturer.page.keyboard.press("Escape")

    phone = open_device("phone")
    phone.open(f"/lecture?follow={room}&lang={lang}")
    phone.page.wait_for_function("() => document.body.dataset.follow === 'following'")
    assert slide_of(phone) == str(n) and phone.page.locator("#room-follow-key").is_hidden()
    assert not phone.page.evaluate("() => sessionStorage.getItem('resnorm-follow')")  # a phone holds no key

    lecturer.page.keyboard.press("ArrowRight")
    phone.page.wait_for_function("n => document.body.dataset.slide === String(n)", arg=n + 1, timeout=10_000)
    phone.page.screenshot(path=str(SHOTS / f"phone-{lang}.png"))

    phone.page.keyboard.press("ArrowRight")  # the phone may look ahead; it drives nothing
    phone.page.wait_for_function("n => document.body.dataset.slide === String(n)", arg=n + 2)
    assert slide_of(lecturer) == str(n + 1)


def test_a_phone_that_lost_its_connection_comes_back_to_the_current_slide(open_device):
    lecturer = open_device("desktop")
    lecturer.open("/lecture?slide=2")
    room, _ = start_following(lecturer)
    lecturer.page.keyboard.press("Escape")
    phone = open_device("phone")
    phone.open(f"/lecture?follow={room}")
    phone.page.wait_for_function("() => document.body.dataset.follow === 'following'")
    phone.expect("net::ERR_INTERNET_DISCONNECTED")  # Chromium logs each reconnection tried while offline
    phone.page.context.set_offline(True)  # Wi-Fi gone (or the phone asleep) while the lecturer moves on
    lecturer.page.keyboard.press("ArrowRight")
    lecturer.page.keyboard.press("ArrowRight")
    phone.page.context.set_offline(False)
    phone.page.evaluate("() => window.dispatchEvent(new Event('online'))")
    phone.page.wait_for_function("() => document.body.dataset.slide === '4'", timeout=15_000)
