"""The dashboard in a real headless Chromium (Debian's chromium and chromium-driver, driven by
selenium, as tests/webapp/test_docs_browser.py) against gunicorn on the demo store: sign in,
visit every page at 390 and 1280 px (screenshots in var/screenshots/ for a person to look at),
compare each page's numbers with the API's JSON, run axe-core, check the CSP and the cookie's
flags, and see a revoked key's session end."""
from __future__ import annotations

import json
import pathlib
import re
import shutil
import time

import pytest

from store.models import ApiKey
from tests.demo_api import demo_keys, served_demo, unmetered_demo
from tests.servers import http_get
from tests.webapp.pages.conftest import at
from tests.webapp.test_docs_browser import browser, css, until  # noqa: F401 - the fixture

ROOT = pathlib.Path(__file__).resolve().parents[3]
AXE = ROOT / ".venv" / "node" / "node_modules" / "axe-core" / "axe.min.js"
SHOTS = ROOT / "var" / "screenshots"
CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (CHROMIUM and DRIVER),
                                 reason="Debian's chromium and chromium-driver are not installed"),
              pytest.mark.skipif(not AXE.exists(),
                                 reason="axe-core is not installed (make test installs it with npm)")]
WIDTHS = (1280, 390)


def pages(site: str, key: str) -> dict[str, tuple[str, str]]:
    """Every page by name: (its path, the API path whose answer its numbers come from)."""
    report = json.loads(http_get(f"{site}/api/v1/reports?limit=1", key)[2])["reports"][0]["id"]
    source = json.loads(http_get(f"{site}/api/v1/sources?limit=1", key)[2])["sources"][0]
    domain = json.loads(http_get(f"{site}/api/v1/dashboard/overview", key)[2])["domain_cards"][0]
    name, ip = domain["domain"], source["source_ip"]
    return {"overview": ("/", "/dashboard/overview"),
            "domain": (f"/domains/{name}", f"/domains/{name}/health"),
            "dns": (f"/domains/{name}/dns?record=dmarc", f"/domains/{name}/health"),
            "reports": ("/reports", "/reports"),
            "report": (f"/reports/{report}", f"/reports/{report}"),
            "sources": ("/sources", "/sources"),
            "source": (f"/sources/{ip}", f"/sources/{ip}"),
            "tls-reports": ("/tls-reports", "/tls-reports"),
            "events": ("/events", "/events"),
            "usage": ("/usage", "/api-keys/usage")}


def sign_in(driver, site: str, key: str) -> None:
    from selenium.webdriver.common.by import By
    driver.get(f"{site}/")
    until(driver, lambda d: "/sign-in" in d.current_url)
    field = css(driver, "#key")
    field.send_keys(key)
    driver.find_element(By.CSS_SELECTOR, "form.sign-in button").click()
    until(driver, lambda d: "/sign-in" not in d.current_url)


def shown_numbers(driver) -> list[tuple[str, str, str]]:
    return driver.execute_script(
        "return [...document.querySelectorAll('data[data-api]')].map("
        "e => [e.dataset.api, e.value, e.dataset.from || ''])")


def serious_violations(driver) -> list[str]:
    driver.execute_script(AXE.read_text())
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document).then(r => done(r.violations.map(v => [v.impact, v.id, v.help])));")
    return [f"{impact} {rule}: {help_}" for impact, rule, help_ in result
            if impact in ("serious", "critical")]


def look(driver, name: str, width: int) -> None:
    """The page at this width: no sideways scrolling of the page, every number shown inside the
    window (none scrolled out of sight in a table's box), no serious accessibility fault, and a
    full-length screenshot."""
    driver.set_window_size(width, 900)
    overflow = driver.execute_script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, (name, width, overflow)
    assert numbers_out_of_sight(driver) == [], (name, width)
    assert serious_violations(driver) == [], (name, width)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, min(height + 140, 8000))
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SHOTS / f"{name}-{width}.png"))


def numbers_out_of_sight(driver) -> list[str]:
    """The API paths of numbers drawn past the window's right edge (a closed <details> draws
    none)."""
    return driver.execute_script(
        "const edge = document.documentElement.clientWidth;"
        "return [...document.querySelectorAll('data[data-api]')].filter(e => {"
        "  const box = e.getBoundingClientRect(); return box.width > 0 && box.right > edge;"
        "}).map(e => e.dataset.api);")


def first_paint(driver) -> float:
    return driver.execute_script(
        "const p = performance.getEntriesByName('first-contentful-paint')[0];"
        "return p ? p.startTime : 0;")


def test_every_page_in_a_real_browser(rua, config, tmp_path, browser):  # noqa: F811
    key = demo_keys(rua)[0]
    unmetered_demo()
    with served_demo(config, tmp_path) as base:
        site = base[:-len("/api/v1")]
        status, headers, _ = http_get(f"{site}/sign-in")
        assert status == 200 and "script-src 'none'" in headers["Content-Security-Policy"]
        sign_in(browser, site, key)
        cookie = browser.get_cookie("rua_session")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Lax" and not cookie["secure"]
        assert key not in cookie["value"]
        paints = {}
        for name, (path, api_path) in pages(site, key).items():
            browser.set_window_size(1280, 900)
            browser.get(site + path)
            assert not re.search(r"/sign-in", browser.current_url), name
            paints[name] = first_paint(browser)
            answers = {api_path: json.loads(http_get(site + "/api/v1" + api_path, key)[2])}
            for json_path, value, answer in shown_numbers(browser):
                if answer not in answers:
                    answers[answer] = json.loads(http_get(site + "/api/v1" + answer, key)[2])
                expected = at(answers[answer or api_path], json_path)
                assert float(value) == expected, (name, json_path, value, expected)
            for width in WIDTHS:
                look(browser, name, width)
        # First paint is a figure for a person (goal: under 1,000 ms), not an assert a busy
        # machine could fail: it is written beside the screenshots.
        (SHOTS / "first-paint.txt").write_text(
            "".join(f"{name}\t{ms:.0f} ms\n" if ms else f"{name}\tnot reported by the browser\n"
                    for name, ms in sorted(paints.items())))
        browser.get(f"{site}/domainz")                  # a typo: the "not found" page
        assert "There is no page at this address." in browser.page_source
        for width in WIDTHS:
            look(browser, "not-found", width)

        ApiKey.update(revoked_at=ApiKey.created_at).execute()
        time.sleep(0.1)
        browser.get(f"{site}/events")
        until(browser, lambda d: "/sign-in" in d.current_url)
        assert "was revoked" in browser.page_source
    print(f"screenshots: {SHOTS}")
