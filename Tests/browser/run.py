#!/usr/bin/env python3
"""The dashboard as a person uses it, in headless Chromium (Debian's chromium, chromium-driver and
python3-selenium).

Starts `jobrunner run JOBS --http 127.0.0.1:0` on a job directory of its own (a job that fails
until a marker file exists, a job that writes a growing log until a stop file exists, a job in a
pipeline of its own behind the failing one, a periodic job, hostile text in an output and a log),
waits for the line where the server says its address, and then:

1. opens every page (/, /runs, /runs/ID, an attempt's log, /jobs/ID) and finds no error in the
   browser's console (the server's Content-Security-Policy would report any inline script or
   style) and no hostile markup run;
2. suspends a pipeline with its button and sees the suspension on the page;
3. clicks Retry on the failed job and sees it become `succeeded` over SSE, with no reload;
4. follows the growing log: new lines appear and stay in view; once the reader scrolls up,
   following stops (the view stays where the reader put it) until they scroll back down;
5. writes screenshots of every page (and of `report --html`'s file) at 1366x768 and 375 px wide,
   light and dark, under --out.

Usage: Tests/browser/run.py --jobrunner .build/debug/jobrunner --out .build/browser
Exit status 0 when every check passed, 1 otherwise (each failure printed).
"""
import argparse
import base64
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.common.exceptions import (NoSuchElementException, StaleElementReferenceException,
                                            TimeoutException)
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    # Debian's python3-selenium is installed for the system's Python; another python3 first on
    # the PATH (pyenv) does not see it.
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise SystemExit("selenium is missing: apt-get install -y chromium chromium-driver python3-selenium")

WAIT = 900  # seconds: only a guard against a hung run; each wait is for a change on the page, not for a time

JOBS = """
pipelines:
  build: {{ maxConcurrent: 4 }}
  deploy: {{ maxConcurrent: 1 }}
jobs:
  fetch:
    pipeline: build
    run: |
      printf 'token=<script>window.owned=1</script>\\n' >> "$JOBRUNNER_OUTPUT"
      printf '\\033[32mfetched\\033[0m <img src=x onerror="window.owned=1">\\n'
  flaky:
    pipeline: build
    needs: [fetch]
    run: |
      if [ -f {marker} ]; then echo recovered; else printf '\\033[1;31mflaky failed\\033[0m: try again\\n'; exit 3; fi
  publish:
    pipeline: deploy
    needs: [flaky]
    run: echo published
  grow:
    pipeline: build
    run: |
      i=0
      while [ ! -f {stop} ]; do i=$((i+1)); printf 'line %d of a growing log \\033[3%dmcolour\\033[0m\\n' $i $((i % 7 + 1)); sleep 0.1; done
      echo stopped
  tick:
    every: 1h
    run: echo tick
"""


class Output:
    """Reads a process's stdout and stderr on threads; a test waits for a line."""

    def __init__(self, proc):
        self.lines = []
        self.lock = threading.Condition()
        for stream in (proc.stdout, proc.stderr):
            threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for raw in iter(stream.readline, b""):
            with self.lock:
                self.lines.append(raw.decode(errors="replace").rstrip("\n"))
                self.lock.notify_all()
        with self.lock:
            self.lines.append(None)
            self.lock.notify_all()

    def wait_for(self, pattern, timeout=WAIT):
        """The first match of the regular expression in a line, waiting for the line to come."""
        deadline = time.monotonic() + timeout
        index = 0
        with self.lock:
            while True:
                while index < len(self.lines):
                    line = self.lines[index]
                    index += 1
                    if line is None:
                        continue
                    match = re.search(pattern, line)
                    if match:
                        return match
                if self.lines.count(None) == 2:
                    raise AssertionError(f"the runner ended before printing {pattern!r}:\n" + self.text())
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no line matching {pattern!r} in {timeout} s:\n" + self.text())
                self.lock.wait(left)

    def text(self):
        return "\n".join(line for line in self.lines if line is not None)


class Checks:
    def __init__(self):
        self.failures = []

    def check(self, condition, words):
        print(("ok    " if condition else "FAIL  ") + words, flush=True)
        if not condition:
            self.failures.append(words)


def start_browser():
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--hide-scrollbars", "--window-size=1366,768"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(service=service, options=options)


def console_errors(driver):
    return [entry["message"] for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]


def shoot(driver, out, name):
    """Screenshots of the page at 1366x768 (the viewport) and 375 px wide (the whole page, at most
    4,000 px high), each light and dark."""
    paths = []
    for scheme in ("light", "dark"):
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                               {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
        for width, height, label in ((1366, 768, "1366x768"), (375, 812, "375")):
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                   {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 500})
            if width < 500:
                metrics = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
                full = int(metrics.get("cssContentSize", metrics.get("contentSize"))["height"])
                driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                       {"width": width, "height": min(max(full, height), 4000),
                                        "deviceScaleFactor": 1, "mobile": True})
                # At 375 px every action button is within reach (the Pipelines table's
                # Suspend was cut off), and the page itself never scrolls sideways.
                clipped = driver.execute_script("""
                    var out = [];
                    document.querySelectorAll('td.actions button').forEach(function (b) {
                      var r = b.getBoundingClientRect();
                      if (r.right > window.innerWidth) { out.push(b.textContent); }
                    });
                    if (document.documentElement.scrollWidth > window.innerWidth) { out.push('the page'); }
                    return out;""")
                assert not clipped, f"{name} at {width} px, {scheme}: cut off at the right: {clipped}"
            shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
            path = os.path.join(out, f"{name}-{label}-{scheme}.png")
            with open(path, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
            paths.append(path)
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    return paths


def wait_until(driver, predicate, words, timeout=WAIT):
    """Polls `predicate` until it holds. An element the live updates replaced while it was read
    (stale) or not there yet counts as not yet."""
    def attempt(d):
        try:
            return predicate(d)
        except (StaleElementReferenceException, NoSuchElementException):
            return False
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.2).until(attempt)
    except TimeoutException:
        raise AssertionError(f"{words}: not within {timeout} s")


def settle(driver):
    """Waits until the page's script has looked at the page once since its event stream opened
    (`data-live="ready"` on the body): from then on a click is not lost to a swap of the page."""
    wait_until(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-live") == "ready",
               "the page's live updates start")


def api(base, path):
    with urllib.request.urlopen(base + path, timeout=WAIT) as response:
        return json.loads(response.read())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobrunner", required=True)
    parser.add_argument("--out", required=True, help="where the screenshots go")
    args = parser.parse_args()
    jobrunner = os.path.abspath(args.jobrunner)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="jobrunner-browser.")
    jobs = os.path.join(work, "jobs")
    state = os.path.join(work, "state")
    marker = os.path.join(work, "flaky-fixed")
    stop = os.path.join(work, "stop-growing")
    os.makedirs(jobs)
    with open(os.path.join(jobs, "ci.yaml"), "w") as f:
        f.write(JOBS.format(marker=marker, stop=stop))
    checks = Checks()

    help_text = subprocess.run([jobrunner, "run", "--help"], capture_output=True, text=True).stdout
    if "--http" not in help_text:
        raise SystemExit("this jobrunner has no --http: the dashboard's server is not built in")

    proc = subprocess.Popen([jobrunner, "run", jobs, "--state", state, "--progress", "plain",
                             "--http", "127.0.0.1:0"], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    output = Output(proc)
    driver = None
    try:
        base = output.wait_for(r"(http://127\.0\.0\.1:\d+)").group(1)
        print(f"server at {base}", flush=True)
        output.wait_for(r"failed\s+flaky")
        output.wait_for(r"started\s+grow")
        status = api(base, "/api/v1/status")
        run_id = status["run"]["id"]
        driver = start_browser()
        driver.get_log("browser")

        # 1. Every page opens, says what it should, runs nothing hostile, logs no error.
        pages = [
            ("overview", "/", "Overview"),
            ("runs", "/runs", "Runs"),
            ("run", f"/runs/{run_id}", "flaky"),
            ("attempt", f"/runs/{run_id}/jobs/flaky/attempts/1", "flaky failed"),
            ("periodic", "/jobs/tick", "every 1h"),
        ]
        for name, path, words in pages:
            driver.get(base + path)
            wait_until(driver, lambda d: d.execute_script("return document.readyState") == "complete",
                       f"{path} loads")
            body = driver.find_element(By.TAG_NAME, "body").text
            checks.check(words in body, f"{path} shows {words!r}")
            checks.check(driver.execute_script("return window.owned === undefined"),
                         f"{path} runs no script from an output or a log")
            errors = console_errors(driver)
            checks.check(not errors, f"{path} logs no console error {errors if errors else ''}")
            shoot(driver, out, name)
        driver.get(base + f"/runs/{run_id}")
        checks.check("<script>window.owned=1</script>" in driver.find_element(By.TAG_NAME, "body").text,
                     "an output's <script> shows as text")

        # 2. Suspend a pipeline from the overview.
        driver.get(base + "/")
        settle(driver)
        driver.find_element(By.CSS_SELECTOR, "#pipeline-deploy form[action$='/suspend'] button").click()
        wait_until(driver, lambda d: "suspended: 1" in d.find_element(By.ID, "pipeline-deploy").text,
                   "the deploy pipeline shows suspended: 1")
        checks.check(True, "Suspend on the overview suspends the pipeline")
        checks.check(api(base, "/api/v1/status")["pipelines"] and any(
            p["name"] == "deploy" and p["suspended"] == 1 for p in api(base, "/api/v1/status")["pipelines"]),
            "the API says deploy is suspended")

        # 3. Retry the failed job; its state changes over SSE, with no reload.
        open(marker, "w").close()
        driver.get(base + f"/runs/{run_id}")
        settle(driver)
        driver.find_element(By.CSS_SELECTOR, "#job-flaky form[action$='/retry'] button").click()
        wait_until(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#job-flaky .badge"), "the run page again")
        driver.execute_script("window.notReloaded = true")
        wait_until(driver, lambda d: d.find_element(By.CSS_SELECTOR, "#job-flaky .badge").text == "succeeded",
                   "flaky shows succeeded after Retry")
        checks.check(driver.execute_script("return window.notReloaded === true"),
                     "flaky became succeeded on the page without a reload (SSE)")
        wait_until(driver, lambda d: "suspended pipeline deploy" in d.find_element(By.ID, "job-publish").text,
                   "publish waits for its suspended pipeline")
        checks.check(True, "publish shows it waits for the suspended pipeline")
        shoot(driver, out, "run-after-retry")
        errors = console_errors(driver)
        checks.check(not errors, f"no console error during the live updates {errors if errors else ''}")

        # 4. Follow the growing log; stop following when the reader scrolls up.
        driver.get(base + f"/runs/{run_id}/jobs/grow/attempts/1")
        settle(driver)

        def last_line(d):
            numbers = re.findall(r"line (\d+) of a growing log", d.find_element(By.ID, "log").text)
            return int(numbers[-1]) if numbers else 0

        first = last_line(driver)
        wait_until(driver, lambda d: last_line(d) >= first + 5, "the log grows on the page")
        checks.check(True, f"the log grew from line {first} to {last_line(driver)} without a reload")
        # Waited for, not read at once: under load the indicator can change after the lines did.
        wait_until(driver, lambda d: d.find_element(By.ID, "follow").text == "following the log",
                   "the page says it follows")
        checks.check(True, "the page says it follows")
        wait_until(driver, lambda d: d.execute_script(
            "var l = document.getElementById('log'); return l.scrollHeight - l.scrollTop - l.clientHeight < 8"),
            "the end of the log stays in view")
        checks.check(True, "the end of the log stays in view while following")
        shoot(driver, out, "attempt-following")
        driver.execute_script("document.getElementById('log').scrollTop = 0")
        wait_until(driver, lambda d: d.find_element(By.ID, "follow").text.startswith("not following"),
                   "the page says it stopped following")
        checks.check(True, "scrolling up stops following")
        seen = last_line(driver)
        wait_until(driver, lambda d: last_line(d) >= seen + 5, "the log still grows while not followed")
        checks.check(driver.execute_script("return document.getElementById('log').scrollTop") < 50,
                     "the view stays where the reader scrolled while the log grows")
        driver.execute_script("var l = document.getElementById('log'); l.scrollTop = l.scrollHeight")
        wait_until(driver, lambda d: d.find_element(By.ID, "follow").text == "following the log",
                   "following again at the end")
        checks.check(True, "scrolling back to the end follows again")
        errors = console_errors(driver)
        checks.check(not errors, f"no console error while following {errors if errors else ''}")

        # Resume the pipeline from the overview, stop the log, and let the run end.
        driver.get(base + "/")
        settle(driver)
        driver.find_element(By.CSS_SELECTOR, "#pipeline-deploy form[action$='/resume'] button").click()
        # (The words are not read from the page here: the click's answer replaces it meanwhile,
        # and reading an element of the page it replaced raised instead of waiting.)
        wait_until(driver, lambda d: "suspended: 1" not in d.find_element(By.ID, "pipeline-deploy").text,
                   "the deploy pipeline resumes on the overview")
        checks.check(True, "Resume on the overview resumes the pipeline")
        open(stop, "w").close()
        output.wait_for(r"succeeded\s+publish")
        output.wait_for(r"succeeded\s+grow")
        # The page's event stream is closed first: the server waits for its clients as it stops.
        driver.get("about:blank")
        proc.wait(timeout=WAIT)
    except AssertionError as error:
        checks.check(False, str(error))
    finally:
        if driver is None:
            driver = start_browser()
        if proc.poll() is None:
            open(stop, "w").close()
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=WAIT)
            except subprocess.TimeoutExpired:
                proc.kill()

    # 5. The report of the run, as a file.
    report = os.path.join(out, "report.html")
    made = subprocess.run([jobrunner, "report", "--state", state, "--html", report], capture_output=True, text=True)
    checks.check(made.returncode == 0, f"report --html exits 0 {made.stderr.strip()}")
    if made.returncode == 0:
        driver.get("about:blank")
        driver.get_log("browser")  # what the last page said once its server was gone
        driver.get("file://" + report)
        checks.check("publish" in driver.find_element(By.TAG_NAME, "body").text, "the report shows the run's jobs")
        checks.check(not console_errors(driver), "the report logs no console error")
        shoot(driver, out, "report")
    driver.quit()
    shutil.rmtree(work, ignore_errors=True)
    print(f"screenshots in {out}")
    if checks.failures:
        print(f"{len(checks.failures)} check(s) failed")
        sys.exit(1)
    print("every check passed")


if __name__ == "__main__":
    main()
