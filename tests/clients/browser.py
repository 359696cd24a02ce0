"""The web page of `reseam serve` in a real browser: headless Chromium driven through chromedriver
(the W3C WebDriver protocol, spoken here with the standard library only).

Usage: python3 browser.py CONFIG.json
CONFIG holds: chromium, chromedriver (paths), open_url (a server without a token), token_url and
token (a server with one), typed (a text typed into the page, BMP characters only: chromedriver
cannot type others), typed_expected (what `reseam translate` gives for it), screenshot (a PNG
path) and work (a scratch folder).

It types into the page, picks the languages, presses Translate and reads the DOM; then, on the
server with a token, answers the page's prompt once, checks the token is kept across a reload and
that a wrong one is reported. Exits 1 with every failed check named.
"""

import base64
import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"
failures = []


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else ": " + detail), flush=True)
    if not ok:
        failures.append(what)


class WebDriverError(Exception):
    def __init__(self, status, error, message):
        super().__init__(f"{status} {error}: {message}")
        self.error = error


class Driver:
    def __init__(self, base):
        self.base = base
        self.session = None

    def call(self, method, path, body=None):
        url = self.base + (f"/session/{self.session}" if self.session and not path.startswith("/session") else "") + path
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return json.loads(r.read())["value"]
        except urllib.error.HTTPError as e:
            v = json.loads(e.read()).get("value", {})
            raise WebDriverError(e.code, v.get("error"), v.get("message", "")[:300]) from None

    def open(self, url):
        self.call("POST", "/url", {"url": url})

    def find(self, css):
        return self.call("POST", "/element", {"using": "css selector", "value": css})[ELEMENT]

    def js(self, script, *args):
        return self.call("POST", "/execute/sync", {"script": script, "args": list(args)})

    def text(self, css):
        # textContent, not the rendered text: the exact characters the page wrote.
        return self.js("return document.querySelector(arguments[0]).textContent", css)

    def alert(self):
        """The open dialog's text, or None."""
        try:
            return self.call("GET", "/alert/text")
        except WebDriverError as e:
            if e.error == "no such alert":
                return None
            raise


def wait(what, predicate, seconds=30):
    """Polls until predicate() is truthy; returns its value, or None after `seconds`."""
    end = time.monotonic() + seconds
    while True:
        try:
            v = predicate()
        except WebDriverError as e:
            # A dialog blocks scripts until it is answered; the caller looks for it.
            if e.error != "unexpected alert open":
                raise
            v = None
        if v:
            return v
        if time.monotonic() > end:
            print(f"     (gave up waiting for {what} after {seconds} s)", flush=True)
            return None
        time.sleep(0.05)


def options(d, css):
    return d.js("return [...document.querySelectorAll(arguments[0] + ' option')].map(o => o.value)", css)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def translate_by_typing(d, text):
    """Types `text` into the page, picks es → en from the menus and presses Translate."""
    d.call("POST", f"/element/{d.find('#from option[value=es]')}/click", {})
    d.call("POST", f"/element/{d.find('#to option[value=en]')}/click", {})
    box = d.find("#text")
    d.call("POST", f"/element/{box}/clear", {})
    d.call("POST", f"/element/{box}/value", {"text": text})
    d.call("POST", f"/element/{d.find('#go')}/click", {})


def finished(d):
    s = d.text("#status")
    return s if s.startswith(("Translated in", "Translation failed", "Could not")) else None


def open_server(d, cfg):
    t = time.monotonic()
    d.open(cfg["open_url"] + "/")
    listed = wait("the language menus", lambda: options(d, "#to"))
    check("page lists the server's languages: from [auto, es], to [en]",
          options(d, "#from") == ["auto", "es"] and listed == ["en"],
          f"from {options(d, '#from')}, to {listed}")
    translate_by_typing(d, cfg["typed"])
    status = wait("the translation", lambda: finished(d)) or ""
    result = d.text("#result")
    check("typed text, Translate pressed: #result equals reseam translate", result == cfg["typed_expected"],
          f"\n     page:     {result!r}\n     expected: {cfg['typed_expected']!r}\n     status:   {status!r}")
    check("status says it translated", status.startswith("Translated in"), repr(status))
    png = base64.b64decode(d.call("GET", "/screenshot"))
    with open(cfg["screenshot"], "wb") as f:
        f.write(png)
    check("screenshot written", png[:8] == b"\x89PNG\r\n\x1a\n", f"{len(png)} bytes")
    print(f"     {cfg['screenshot']} ({len(png)} bytes); page flow {time.monotonic() - t:.2f} s", flush=True)

    # Source "Detect language": the server identifies it, the page says which.
    d.call("POST", f"/element/{d.find('#from option[value=auto]')}/click", {})
    d.js("document.querySelector('#status').textContent = ''")
    d.call("POST", f"/element/{d.find('#go')}/click", {})
    status = wait("the auto translation", lambda: finished(d)) or ""
    check("from Detect language: same translation, detected es",
          d.text("#result") == cfg["typed_expected"] and "(detected es)" in status,
          f"result {d.text('#result')!r}, status {status!r}")


def token_server(d, cfg):
    t = time.monotonic()
    d.open(cfg["token_url"] + "/")
    prompt = wait("the token prompt", d.alert, 15)
    check("page asks for the token", prompt == "This server needs a token:", repr(prompt))
    if prompt is None:
        return
    d.call("POST", "/alert/text", {"text": cfg["token"]})
    d.call("POST", "/alert/accept", {})
    listed = wait("the language menus", lambda: options(d, "#to"))
    check("with the token given, the languages are listed", listed == ["en"], repr(listed))
    translate_by_typing(d, cfg["typed"])
    status = wait("the translation", lambda: finished(d)) or ""
    check("with the token: #result equals reseam translate", d.text("#result") == cfg["typed_expected"],
          f"result {d.text('#result')!r}, status {status!r}")
    check("asked once: no second prompt", d.alert() is None)

    d.open(cfg["token_url"] + "/")
    listed = wait("the language menus after a reload", lambda: d.alert() or options(d, "#to"))
    check("after a reload the token is kept: no prompt, languages listed", listed == ["en"], repr(listed))

    d.js("localStorage.clear()")
    d.open(cfg["token_url"] + "/")
    prompt = wait("the token prompt", d.alert, 15)
    if prompt is not None:
        d.call("POST", "/alert/text", {"text": "not-" + cfg["token"]})
        d.call("POST", "/alert/accept", {})
    status = wait("the refusal", lambda: finished(d)) or ""
    error = d.js("return document.querySelector('#status').className")
    check("a wrong token is shown as an error", "token is wrong" in status and error == "error",
          f"status {status!r}, class {error!r}")
    print(f"     token flow {time.monotonic() - t:.2f} s", flush=True)


def main():
    cfg = json.load(open(sys.argv[1], encoding="utf-8"))
    port = free_port()
    log = open(cfg["work"] + "/chromedriver.log", "w")
    driver = subprocess.Popen([cfg["chromedriver"], f"--port={port}"], stdout=log, stderr=subprocess.STDOUT)
    try:
        d = Driver(f"http://127.0.0.1:{port}")
        if not wait("chromedriver", lambda: _ready(d), 30):
            sys.exit("chromedriver did not start; its log: " + cfg["work"] + "/chromedriver.log")
        t = time.monotonic()
        caps = {
            "browserName": "chrome",
            # The page's prompt is answered here, not dismissed by the driver.
            "unhandledPromptBehavior": "ignore",
            "goog:chromeOptions": {
                "binary": cfg["chromium"],
                # --no-sandbox: CI containers run as root, where Chromium's sandbox cannot start.
                "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1000,640", f"--user-data-dir={cfg['work']}/chromium-profile"],
            },
        }
        d.session = d.call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})["sessionId"]
        print(f"     Chromium started through chromedriver in {time.monotonic() - t:.2f} s", flush=True)
        try:
            open_server(d, cfg)
            token_server(d, cfg)
        finally:
            d.call("DELETE", "")
    finally:
        driver.terminate()
        driver.wait(10)
    if failures:
        print(f"FAILED: {len(failures)} browser check(s)", file=sys.stderr)
        sys.exit(1)


def _ready(d):
    try:
        return d.call("GET", "/status").get("ready")
    except (urllib.error.URLError, ConnectionError):
        return False


if __name__ == "__main__":
    main()
