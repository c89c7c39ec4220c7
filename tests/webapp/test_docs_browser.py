"""The docs page in a real headless Chromium (Debian's chromium and chromium-driver, driven by
selenium) against gunicorn on the demo store: it loads with no console error, lists every
operation, and "Try it out" with a pasted key shows the server's real answers."""
from __future__ import annotations

import pathlib
import shutil

import pytest

from tests.demo_api import demo_keys, served_demo
from tests.test_contract import DOC

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (CHROMIUM and DRIVER),
                                 reason="Debian's chromium and chromium-driver are not installed")]
WAIT = 30
OPERATIONS = {path for path, item in DOC["paths"].items() if "get" in item} - {"/openapi.json"}


@pytest.fixture
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--window-size=1280,1600"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.implicitly_wait(0)
    yield driver
    driver.quit()


def until(driver, condition):
    from selenium.webdriver.support.ui import WebDriverWait
    return WebDriverWait(driver, WAIT).until(condition)


def css(driver, selector: str):
    from selenium.webdriver.common.by import By
    return until(driver, lambda d: d.find_element(By.CSS_SELECTOR, selector))


def authorize(driver, key: str) -> None:
    """The Authorize dialog: log out of an earlier key, paste this one, close."""
    from selenium.webdriver.common.by import By
    css(driver, ".auth-wrapper .authorize").click()
    dialog = css(driver, ".modal-ux")
    for button in dialog.find_elements(By.XPATH, ".//button[normalize-space()='Logout']"):
        button.click()
    field = css(driver, ".modal-ux input[type=text], .modal-ux input[type=password]")
    field.send_keys(key)
    dialog.find_element(By.XPATH, ".//button[normalize-space()='Authorize']").click()
    css(driver, ".modal-ux .btn-done").click()


def try_overview(driver) -> tuple[str, str]:
    """Execute GET /dashboard/overview: (status shown, body shown)."""
    from selenium.webdriver.common.by import By
    block = css(driver, "#operations-analytics-getOverview")
    if not block.find_elements(By.CSS_SELECTOR, ".execute, .btn-clear"):
        for button in block.find_elements(By.CSS_SELECTOR, ".try-out__btn"):
            button.click()
    for button in block.find_elements(By.CSS_SELECTOR, ".btn-clear"):
        button.click()
    block.find_element(By.CSS_SELECTOR, ".execute").click()
    answer = ".live-responses-table tr.response"
    status = until(driver, lambda d: block.find_element(
        By.CSS_SELECTOR, f"{answer} .response-col_status").text.strip() or None)
    body = block.find_element(By.CSS_SELECTOR, f"{answer} .response-col_description pre").text
    return status, body


def test_the_docs_page_lists_every_operation_and_tries_them_with_a_pasted_key(
        rua, config, tmp_path, browser):
    from selenium.webdriver.common.by import By
    key = demo_keys(rua)[0]
    with served_demo(config, tmp_path) as base:
        browser.get(f"{base}/docs")
        until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".opblock-get")) > 18)
        errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
        assert not errors
        shown = {element.get_attribute("data-path") for element in browser.find_elements(
            By.CSS_SELECTOR, ".opblock-get .opblock-summary-path")}
        assert shown - {"/openapi.json"} == OPERATIONS and len(OPERATIONS) == 18
        # Each operation once: HEAD is a sentence of the description, not a twin block.
        assert not browser.find_elements(By.CSS_SELECTOR, ".opblock-head")
        assert len(browser.find_elements(By.CSS_SELECTOR, ".opblock")) == len(shown)
        assert "HEAD" in css(browser, ".info").text

        css(browser, "#operations-analytics-getOverview .opblock-summary-control").click()
        authorize(browser, key)
        status, body = try_overview(browser)
        assert status == "200" and '"org_health"' in body, (status, body[:300])
        shot = pathlib.Path(tmp_path, "docs-page.png")
        browser.save_screenshot(str(shot))

        authorize(browser, "rua_" + "0" * 40)
        status, body = try_overview(browser)
        assert status == "401" and '"invalid_key"' in body, (status, body[:300])
    print(f"screenshot of the docs page after a 200: {shot}")
