"""A real headless Chromium for the page tests: Debian's ``chromium`` driven by selenium
through Debian's ``chromium-driver`` (the same build as the browser, so nothing is
downloaded: selenium is given both paths and never runs its driver manager).

Locally a missing browser skips the tests; with ``PAIRCHECK_REQUIRE_BROWSER=1`` (CI) it
fails them, so a CI run without the browser can never pass by skipping.

``PAIRCHECK_CHROMIUM`` and ``PAIRCHECK_CHROMEDRIVER`` point at other binaries;
``PAIRCHECK_ARTIFACTS`` is where screenshots go (default: test-artifacts/ in the repo).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
INSTALL = "apt-get install chromium chromium-driver && pip install -e '.[browser]'"


def _binary(env: str, *names: str) -> str | None:
    given = os.environ.get(env)
    if given:
        return given if os.access(given, os.X_OK) else None
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the selenium package is not installed"
    if _binary("PAIRCHECK_CHROMIUM", "chromium", "chromium-browser") is None:
        return "no chromium on PATH (or $PAIRCHECK_CHROMIUM)"
    if _binary("PAIRCHECK_CHROMEDRIVER", "chromedriver") is None:
        return "no chromedriver on PATH (or $PAIRCHECK_CHROMEDRIVER)"
    return None


def require_browser() -> None:
    """Fail (CI, ``PAIRCHECK_REQUIRE_BROWSER=1``) or skip (local) without Chromium and selenium."""
    why = missing()
    if why is None:
        return
    if os.environ.get("PAIRCHECK_REQUIRE_BROWSER") == "1":
        pytest.fail(f"browser required (PAIRCHECK_REQUIRE_BROWSER=1) but {why}; install with: {INSTALL}",
                    pytrace=False)
    pytest.skip(f"browser tests need Chromium ({why}); {INSTALL}")


def start_chromium(*extra: str) -> Any:
    """A headless Chromium with its console and network logged (``get_log``); ``extra``: more flags."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = _binary("PAIRCHECK_CHROMIUM", "chromium", "chromium-browser") or "chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-default-apps", "--disable-sync",
                "--window-size=1280,900", "--force-device-scale-factor=1", *extra):
        options.add_argument(arg)
    # "browser": console messages; "performance": DevTools network events (every request).
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    service = Service(executable_path=_binary("PAIRCHECK_CHROMEDRIVER", "chromedriver") or "chromedriver")
    return webdriver.Chrome(options=options, service=service)


def artifacts_dir(name: str) -> Path:
    root = Path(os.environ.get("PAIRCHECK_ARTIFACTS") or REPO / "test-artifacts")
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# The README's screenshot: the checked-in page, filtered as in the README's link.
README_VIEW = "engine=llama.cpp&evidence=measured"
README_SIZE = (1000, 740)


def readme_screenshot(out: Path = REPO / "docs" / "pairs-page.png") -> Path:
    """Shoot docs/pairs.html at README_VIEW (``python tests/browser.py``)."""
    driver = start_chromium("--hide-scrollbars")
    try:
        width, height = README_SIZE
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        driver.get((REPO / "docs" / "pairs.html").as_uri() + "#" + README_VIEW)
        driver.find_element("id", "count")
        driver.save_screenshot(str(out))
    finally:
        driver.quit()
    return out


if __name__ == "__main__":
    why = missing()
    if why:
        raise SystemExit(f"browser.py: {why}; {INSTALL}")
    path = readme_screenshot()
    print(f"{path}: {path.stat().st_size} bytes")
