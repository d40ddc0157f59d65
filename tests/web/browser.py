"""Helpers for driving the UI in Chromium: find by data-testid, wait, type, read attributes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from selenium.common.exceptions import (
    ElementClickInterceptedException,
    StaleElementReferenceException,
)
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

T = TypeVar("T")
WAIT_SECONDS = 60.0  # two shared cores: slow is not broken
FIELDS = ("input", "textarea")


def wait(driver: WebDriver, check: Callable[[WebDriver], T], seconds: float = WAIT_SECONDS) -> T:
    # A re-render can replace an element between finding and reading it: look again.
    return WebDriverWait(
        driver, seconds, poll_frequency=0.05, ignored_exceptions=(StaleElementReferenceException,)
    ).until(check)


def testid(name: str) -> str:
    return f'[data-testid="{name}"]'


def find(driver: WebDriver, name: str, within: str = "") -> WebElement:
    return wait(
        driver, lambda d: _visible(d.find_elements(By.CSS_SELECTOR, _selector(name, within)))
    )


def _selector(name: str, within: str) -> str:
    if within == "input":  # Quasar puts the attributes of a q-input on the <input> itself
        return ", ".join(f"{tag}{testid(name)}, {testid(name)} {tag}" for tag in FIELDS)
    return f"{testid(name)} {within}".strip()


def find_all(driver: WebDriver, name: str, within: str = "") -> list[WebElement]:
    return driver.find_elements(By.CSS_SELECTOR, _selector(name, within))


def gone(driver: WebDriver, name: str) -> None:
    """Wait until no element with this test id is on screen (read in the page: none go stale)."""
    script = f"return [...document.querySelectorAll('{testid(name)}')].some(e => e.offsetParent);"
    wait(driver, lambda d: not d.execute_script(script))


def texts(driver: WebDriver, name: str) -> list[str]:
    """The text of each element with this test id on screen (read in the page: none go stale)."""
    script = (
        f"return [...document.querySelectorAll('{testid(name)}')]"
        ".filter(e => e.offsetParent).map(e => e.innerText.trim());"
    )
    return driver.execute_script(script)


def shown(driver: WebDriver, text: str) -> bool:
    """Whether `text` is anywhere on the page (a notification, say)."""
    return text in driver.find_element(By.TAG_NAME, "body").text


def replace_text(field: WebElement, text: str) -> None:
    """Type `text` into `field` in place of what it holds."""
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(Keys.DELETE)
    field.send_keys(text)


def _visible(elements: list[WebElement]) -> WebElement | None:
    return next((e for e in elements if e.is_displayed()), None)


def by_text(driver: WebDriver, text: str, tag: str = "*") -> WebElement:
    xpath = f"//{tag}[normalize-space(.)={_literal(text)}]"
    return wait(driver, lambda d: _visible(d.find_elements(By.XPATH, xpath)))


def _literal(text: str) -> str:
    return f'"{text}"' if '"' not in text else f"'{text}'"


def click(driver: WebDriver, element: WebElement) -> None:
    """Click `element` once it has stopped moving and nothing covers it.

    A tab panel slides into place: WebDriver checks what is under the element's centre and then
    presses the mouse there, and a panel still moving between the two loses the click."""
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
    wait(driver, lambda d: d.execute_async_script(_STILL, element))

    def clicked(_driver: WebDriver) -> bool:
        element.click()
        return True

    covered = (ElementClickInterceptedException,)
    WebDriverWait(driver, WAIT_SECONDS, poll_frequency=0.05, ignored_exceptions=covered).until(
        clicked
    )


# True when the element is outside any running Vue transition and has not moved for 100 ms.
_STILL = """
const [element, done] = arguments;
const where = () => JSON.stringify(element.getBoundingClientRect());
const before = where();
setTimeout(() => done(
    where() === before && !element.closest('[class*="-enter-active"], [class*="-leave-active"]')
), 100);
"""


def graph_attribute(driver: WebDriver, name: str) -> str | None:
    element = find(driver, "graph-chart")
    return element.get_attribute(name)


def wait_drawn(driver: WebDriver, version: str, seconds: float = WAIT_SECONDS) -> float:
    """Seconds until the graph view says it has finished drawing `version`."""
    start = time.perf_counter()
    wait(
        driver,
        lambda d: any(
            e.get_attribute("data-drawn-version") == version
            for e in d.find_elements("css selector", testid("graph-chart"))
        ),
        seconds,
    )
    return time.perf_counter() - start


def sign_in(driver: WebDriver, url: str, token: str) -> None:
    """Sign in with `token`, unless this browser already is."""
    driver.get(url + "/")
    wait(
        driver,
        lambda d: (
            "/signin" in d.current_url or d.find_elements(By.CSS_SELECTOR, testid("sign-out"))
        ),
    )
    if "/signin" not in driver.current_url:
        return
    find(driver, "token", "input").send_keys(token + Keys.ENTER)
    find(driver, "sign-out")


def page_resources(driver: WebDriver) -> list[Any]:
    return driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name).concat([location.href]);"
    )
