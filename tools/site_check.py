"""Check the built site as a reader would meet it: every link, then the pages in a real browser.

Used by `make site-check`. Serves build/site over HTTP (as a host would). LinkChecker follows every link, image,
script and stylesheet from the landing page and fails on one that is missing (anchors within the site are Sphinx's
to check: myst reports a missing one and the build fails); with --extern it checks the links out of the site too
(they need the internet). Then it loads each page given, at a desktop and at a phone width, with Selenium driving
Chromium (Debian's `chromium` and `chromium-driver`). A page fails on an error in the browser's console, an image
that did not load, a page with (almost) no text, terminal debris in the text (ANSI escape codes, a progress bar
drawn line after line), or content wider than a phone's screen. A screenshot of each page at each width is saved
under --shots.

    python tools/site_check.py [--site build/site] [--shots build/site-check] [--extern] PAGE.html ...
"""

from __future__ import annotations

import argparse
import functools
import http.server
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.wait import WebDriverWait

WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}  # an iPhone 12-15's CSS viewport
SEARCH_HITS = "return document.querySelectorAll('#search-results li').length"
DEBRIS = re.compile(r"\x1b\[|\[0m|\[1;3\dm|(\d+%\|[^\n]*\n){2}")  # ANSI codes; two progress lines in a row


class Handler(http.server.SimpleHTTPRequestHandler):
    def end_headers(self) -> None:
        self.send_header("LinkChecker", "local")  # LinkChecker's sign that it may skip its per-host rate limit
        super().end_headers()

    def log_message(self, *args) -> None:  # LinkChecker and the browser's log say what failed
        pass


class Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:  # a client that hung up early (a HEAD-like read)
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def serve(folder: Path) -> tuple[Server, str]:
    """A local HTTP server for the site on a free port, and its base URL."""
    server = Server(("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def links(base: str, extern: bool) -> bool:
    """LinkChecker over the whole site from its landing page; True when nothing is broken."""
    linkchecker = Path(sys.executable).parent / "linkchecker"  # requirements-site.txt installs it beside Python
    rc = Path(__file__).resolve().parent.parent / "docs/linkcheckerrc"
    cmd = [str(linkchecker), "-f", str(rc), *(["--check-extern"] if extern else []), base + "index.html"]
    return subprocess.run(cmd).returncode == 0


def browser() -> webdriver.Chrome:
    """Headless Chromium (or Chrome) with its console log kept; a clear error when there is none."""
    binary = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    driver = shutil.which("chromedriver")
    if not (binary and driver):
        sys.exit("site-check: needs Chromium and its chromedriver on PATH (Debian: apt-get install chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=opts, service=Service(driver))


def problems(driver: webdriver.Chrome, width: str) -> list[str]:
    """What is wrong with the page loaded in `driver`, as one line each."""
    found = [f"console: {e['message']}" for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    broken = driver.execute_script(
        "return [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"
    )
    found += [f"image did not load: {src}" for src in broken]
    text = driver.execute_script("return document.querySelector('main')?.innerText || ''")
    if len(text) < 500:
        found.append(f"almost empty: {len(text)} characters of text in <main>")
    found += [f"terminal debris in the text: {m.group(0)!r}" for m in DEBRIS.finditer(text)][:3]
    if width == "phone":
        wide = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        if wide > 1:
            found.append(f"wider than a phone: the page scrolls sideways by {wide} px")
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pages", nargs="+", help="pages relative to the site: index.html, search.html?q=rccl, ...")
    ap.add_argument("--site", type=Path, default=Path("build/site"))
    ap.add_argument("--shots", type=Path, default=Path("build/site-check"))
    ap.add_argument("--extern", action="store_true", help="check the links out of the site too (the internet)")
    a = ap.parse_args(argv)
    a.shots.mkdir(parents=True, exist_ok=True)
    server, base = serve(a.site)
    failed = 0 if links(base, a.extern) else 1
    driver = browser()
    try:
        for page in a.pages:
            for width, size in WIDTHS.items():
                w, h = size
                metrics = {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": width == "phone"}
                driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
                driver.get(base + page)
                if "search.html?q=" in page:  # Sphinx's search fills its results in from JavaScript
                    try:
                        WebDriverWait(driver, 10).until(lambda d: d.execute_script(SEARCH_HITS) > 0)
                    except TimeoutException:
                        pass  # problems() below reports the empty page
                shot = a.shots / f"{page.split('?')[0].removesuffix('.html').replace('/', '-')}-{width}.png"
                driver.save_screenshot(str(shot))
                found = problems(driver, width)
                failed += bool(found)
                print(f"{'FAIL' if found else 'ok  '} {page} ({width}, screenshot {shot})")
                for line in found:
                    print(f"     {line}")
    finally:
        driver.quit()
        server.shutdown()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
