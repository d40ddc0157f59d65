"""The chat column in real Chromium as a person uses it: it follows the answer as it arrives,
stops when they scroll up and offers a way back; the no-model banner is compact and can be
dismissed, the message box stays on screen at common window sizes; Enter sends and Shift+Enter
starts a new line. One server (with the small `flaky` test MCP server) and one browser."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.keys import Keys

from tests.web.browser import click, find, find_all, gone, sign_in, wait
from tests.web.chat_support import flaky_only
from tests.web.conftest import LiveUI, serve_ui
from tests.web.test_browser import turn_finished

pytestmark = pytest.mark.timeout(600)
SIZES = ((1280, 720), (1280, 800), (1920, 1080))


@pytest.fixture(scope="module")
def chat_live(
    module_database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveUI]:
    home = tmp_path_factory.mktemp("chat-home")
    servers = {**flaky_only(), "graph": {}}  # the graph server too, for Graph Mode's refusals
    with serve_ui(module_database_url, home, servers=servers, kb_sample_data=False) as live:
        yield live


def open_conversation(driver: Any, live: LiveUI, title: str, mode: str = "normal") -> str:
    with live.api() as api:
        made = api.post("/api/conversations", json={"title": title, "mode": mode})
        cid = made.json()["data"]["id"]
    sign_in(driver, live.url, live.token)
    driver.get(f"{live.url}/c/{cid}")
    find(driver, "message-input", "input")
    return cid


def on_screen(driver: Any, element: Any, *, end_only: bool = False) -> bool:
    """Whether `element` (or, for a long message, its end) is inside the window and inside
    the box that scrolls it."""
    return driver.execute_script(
        """const [element, endOnly] = arguments, e = element.getBoundingClientRect();
        const box = element.closest('[data-testid="messages"]');
        const b = box ? box.getBoundingClientRect() : {top: 0, bottom: innerHeight};
        const top = endOnly ? e.bottom - 20 : e.top;
        return e.height > 0 && top >= Math.max(0, b.top) - 1
            && e.bottom <= Math.min(innerHeight, b.bottom) + 1;""",
        element,
        end_only,
    )


def send_turn(driver: Any, text: str, count: int) -> None:
    find(driver, "message-input", "input").send_keys(text + Keys.ENTER)
    turn_finished(driver, count)


def newest_shown(driver: Any) -> bool:
    messages = find_all(driver, "message-assistant")
    return bool(messages) and on_screen(driver, messages[-1], end_only=True)


def test_the_chat_follows_the_answer_until_the_reader_scrolls_up(
    browser: Any, chat_live: LiveUI
) -> None:
    browser.set_window_size(1280, 720)
    open_conversation(browser, chat_live, "Scrolling")
    for count in range(1, 4):  # /help is long: three of them overflow the message list
        send_turn(browser, "/help", count)
        wait(browser, newest_shown)
    box = find(browser, "messages")
    assert browser.execute_script("return arguments[0].scrollTop", box) > 0
    assert not any(e.is_displayed() for e in find_all(browser, "jump-to-latest"))

    find(browser, "message-input", "input").send_keys("/flaky.sleep 5" + Keys.ENTER)
    wait(browser, lambda d: any("running" in c.text for c in find_all(d, "tool-call")))
    ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(box), 0, -1500).perform()
    jump = find(browser, "jump-to-latest")  # shown once the reader has left the bottom
    scrolled_to = browser.execute_script("return arguments[0].scrollTop", box)
    turn_finished(browser, 4)
    assert browser.execute_script("return arguments[0].scrollTop", box) == scrolled_to
    assert not newest_shown(browser)

    click(browser, jump)
    wait(browser, newest_shown)
    gone(browser, "jump-to-latest")


def test_the_banner_is_compact_dismissible_and_the_box_stays_on_screen(
    browser: Any, chat_live: LiveUI
) -> None:
    for width, height in SIZES:
        browser.set_window_size(width, height)
        open_conversation(browser, chat_live, f"Window {width}x{height}")
        banner = find(browser, "model-banner-row")
        assert banner.size["height"] <= 64, banner.size  # one short line, not a block
        send_turn(browser, "/help", 1)
        wait(browser, lambda d: on_screen(d, find(d, "message-input", "input")))
        wait(browser, newest_shown)
    click(browser, find(browser, "dismiss-banner"))
    gone(browser, "model-banner-row")
    browser.refresh()  # dismissed stays dismissed in this browser
    find(browser, "message-input", "input")
    assert not any(e.is_displayed() for e in find_all(browser, "model-banner-row"))
    browser.set_window_size(1280, 720)


def test_enter_sends_and_shift_enter_starts_a_new_line(browser: Any, chat_live: LiveUI) -> None:
    browser.set_window_size(1280, 720)
    open_conversation(browser, chat_live, "Two lines")
    box = find(browser, "message-input", "input")
    box.send_keys("/flaky.echo first line")
    ActionChains(browser).key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(Keys.SHIFT).perform()
    box.send_keys("/flaky.echo second line")
    assert box.get_attribute("value") == "/flaky.echo first line\n/flaky.echo second line"
    box.send_keys(Keys.ENTER)
    turn_finished(browser, 1)
    cards = [c.text for c in find_all(browser, "tool-call")]
    assert len(cards) == 2 and all("flaky.echo · done" in c for c in cards), cards
    said = find_all(browser, "message-user")[-1].text
    assert "/flaky.echo first line" in said and "/flaky.echo second line" in said
    assert find(browser, "message-input", "input").get_attribute("value") == ""


def test_the_miner_bar_stays_folded_until_asked_for(browser: Any, chat_live: LiveUI) -> None:
    browser.set_window_size(1280, 720)
    open_conversation(browser, chat_live, "No miner yet")
    toggle = find(browser, "open-miner")
    assert not any(e.is_displayed() for e in find_all(browser, "tag-bar"))
    assert toggle.size["height"] <= 48, toggle.size  # one slim line above the messages
    click(browser, toggle)
    find(browser, "tag-bar")
    find(browser, "tag-drug_targets")


def test_each_error_is_shown_once_in_the_words_of_the_page(browser: Any, chat_live: LiveUI) -> None:
    browser.set_window_size(1280, 720)
    open_conversation(browser, chat_live, "Errors")
    send_turn(browser, "/flaky.echo", 1)
    page = find(browser, "messages").text
    usage = "/flaky.echo needs text: /flaky.echo <text>"
    assert page.count("/flaky.echo needs text") == 1 and usage in page, page
    assert [e.text for e in find_all(browser, "turn-error")] == [usage]

    open_conversation(browser, chat_live, "Errors in Graph Mode", mode="graph_mode")
    send_turn(browser, "/flaky.echo hi", 1)
    [error] = [e.text for e in find_all(browser, "turn-error")]
    assert "PATCH" not in error and "/api/" not in error, error
    assert "Normal" in error and "Mode switch" in error, error
    page = find(browser, "messages").text
    assert page.count("not offered in Graph Mode") == 1 and "PATCH" not in page, page


def test_lines_meant_for_the_model_are_not_shown(browser: Any, chat_live: LiveUI) -> None:
    browser.set_window_size(1280, 720)
    open_conversation(browser, chat_live, "Pointers")
    send_turn(browser, "/flaky.chain TP53,MDM2", 1)
    find(browser, "artifact-link")
    page = browser.find_element("tag name", "body").text
    assert "A chain of 2 nodes." in page
    assert "as an artifact" not in page and "shown to the user" not in page, page
    browser.refresh()  # and not from the stored message either
    find(browser, "artifact-link")
    for card in find_all(browser, "tool-call"):
        click(browser, card)
    page = browser.find_element("tag name", "body").text
    assert "A chain of 2 nodes." in page and "as an artifact" not in page, page


def test_a_conversation_is_titled_from_its_first_message_and_renamed(
    browser: Any, chat_live: LiveUI
) -> None:
    browser.set_window_size(1280, 720)
    sign_in(browser, chat_live.url, chat_live.token)
    browser.get(chat_live.url + "/")
    click(browser, find(browser, "create"))  # no title typed
    send_turn(browser, "/flaky.chain TP53,MDM2", 1)
    chat_url = browser.current_url
    picker = find(browser, "artifact-picker")
    click(browser, picker)
    options = wait(
        browser,
        lambda d: [e.text for e in d.find_elements("css selector", ".q-menu .q-item") if e.text],
    )
    kinds = [option.lower().partition(": ") for option in options]
    assert kinds and not any(rest.startswith(kind) for kind, _, rest in kinds), options
    assert any(option.lower().startswith("knowledge graph") for option in options), options

    browser.get(chat_live.url + "/")
    title = "Chain of TP53,MDM2"
    wait(browser, lambda d: title in [e.text for e in find_all(d, "conversation-title")])
    link = next(e for e in find_all(browser, "conversation-title") if e.text == title)
    row = link.find_element("xpath", "./ancestor::div[contains(@class, 'q-card')]")
    click(browser, row.find_element("css selector", '[data-testid="rename"]'))
    box = find(browser, "rename-title", "input")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("TP53 and MDM2" + Keys.ENTER)
    wait(browser, lambda d: "TP53 and MDM2" in [e.text for e in find_all(d, "conversation-title")])
    browser.get(chat_url + "/graph")  # the editor's page is named by the title too
    assert find(browser, "page-title").text == "Graph: TP53 and MDM2"
