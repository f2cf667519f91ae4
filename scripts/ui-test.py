"""make ui-test's browser half (scripts/ui-test.sh starts the server and runs this): the console in headless
chromium through chromedriver and selenium, every page checked by axe-core, against the CLI's and the API's own
answers."""
import argparse
import gzip
import json
import re
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from urllib.parse import parse_qs, unquote, urlparse

from axe_selenium_python import Axe
from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

# The examples `make demo` asks `why` about, one per cause.
DEMO_CAUSES = ["category_not_handled", "service_timeout", "attachment_failed", "dismissed_before_update",
               "apns_rejected", "not_delivered", "held_for_summary", "coalesced_offline", "ok"]

parser = argparse.ArgumentParser()
for name in ["base", "bin", "db", "app", "admin", "read", "ingest"]:
    parser.add_argument(f"--{name}", required=True)
parser.add_argument("--cafile")
parser.add_argument("--secure", action="store_true", help="the cookie must be Secure (the site is TLS)")
parser.add_argument("--screenshots", help="save the overview, a why page and the report here")
args = parser.parse_args()
origin = args.base
# Over TLS the cookie carries the __Host- prefix (docs/console.md).
cookie_name = "__Host-pushtrace_session" if args.secure else "pushtrace_session"
context = ssl.create_default_context(cafile=args.cafile) if args.cafile else None
checks = 0


def check(condition, what, detail=""):
    """Counts a check that holds; stops the test at one that does not, saying what it saw (`detail`)."""
    global checks
    if not condition:
        print(f"ui-test: FAILED: {what}" + (f" [{detail}]" if detail else ""), file=sys.stderr)
        sys.exit(1)
    checks += 1
    print(f"  ok  {what}")


def http(method, path, token=None, body=None, headers=None, cookie=None):
    request = urllib.request.Request(origin + path, data=body, method=method, headers=headers or {})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if cookie:
        request.add_header("Cookie", cookie)
    try:
        with urllib.request.urlopen(request, context=context, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def upload(path, lines):
    body = gzip.compress("".join(json.dumps(line) + "\n" for line in lines).encode())
    status, _, answer = http("POST", path, args.ingest, body, {"Content-Encoding": "gzip", "Content-Type": "application/x-ndjson"})
    check(status == 200 and json.loads(answer)["rejected"] == 0, f"POST {path}: {status} {answer[:120]!r}")


options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1000",
             "--lang=en-US"]:
    options.add_argument(flag)
options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
if args.cafile:
    options.accept_insecure_certs = True  # the test's own self-signed certificate
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
driver.set_page_load_timeout(30)
visited = set()


def console_errors(expected=()):
    """Console entries of level SEVERE since the last call, but those naming an expected status."""
    entries = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    return [entry["message"] for entry in entries if not any(f"status of {code}" in entry["message"] for code in expected)]


def audit(name, expected_statuses=()):
    """axe-core on the page shown; the page's console; its headers fetched again with the browser's cookie."""
    axe = Axe(driver)
    axe.inject()
    results = axe.run()
    serious = [v for v in results["violations"] if v.get("impact") in ("serious", "critical")]
    check(not serious, f"{name}: axe-core finds no serious or critical violation"
          + ("" if not serious else ": " + "; ".join(f"{v['id']}: {v['help']} ({len(v['nodes'])})" for v in serious)))
    errors = console_errors(expected_statuses)
    check(not errors, f"{name}: no console error" + ("" if not errors else f": {errors}"))
    cookie = driver.get_cookie(cookie_name)
    status, headers, _ = http("GET", urlparse(driver.current_url).path + ("?" + urlparse(driver.current_url).query if urlparse(driver.current_url).query else ""),
                              cookie=f"{cookie_name}={cookie['value']}" if cookie else None)
    policy = headers.get("Content-Security-Policy", "")
    check("frame-ancestors 'none'" in policy and "unsafe-inline" not in policy and "default-src 'none'" in policy
          and headers.get("X-Content-Type-Options") == "nosniff", f"{name}: the CSP and nosniff headers ({status})")
    visited.add(name)


def sign_in(token):
    driver.delete_all_cookies()
    driver.get(origin + "/ui/login")
    field = driver.find_element(By.ID, "token")
    field.send_keys(token)
    field.submit()
    try:
        WebDriverWait(driver, 10).until(lambda d: urlparse(d.current_url).path != "/ui/login" or d.find_elements(By.CSS_SELECTOR, "p.problem"))
    except TimeoutException:
        check(False, f"signing in answered nothing the test knows: {driver.current_url} {driver.page_source[:600]}")


def screenshot(name, tallest):
    """The whole page (up to `tallest` pixels) from its top, into the screenshots folder."""
    if not args.screenshots:
        return
    driver.set_window_size(1280, min(tallest, driver.execute_script("return document.body.scrollHeight") + 40))
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(f"{args.screenshots}/{name}.png")
    driver.set_window_size(1280, 1000)


def text(selector):
    # The live page swaps its answer in place: an element read a moment before may be gone.
    for _ in range(50):
        try:
            return " ".join(driver.find_element(By.CSS_SELECTOR, selector).text.split())
        except (StaleElementReferenceException, NoSuchElementException):
            time.sleep(0.02)
    return " ".join(driver.find_element(By.CSS_SELECTOR, selector).text.split())


def texts(selector):
    return [" ".join(element.text.split()) for element in driver.find_elements(By.CSS_SELECTOR, selector)]


# Sign-in: an ingest token is refused with the form again; a read token gets the session cookie.
driver.get(origin + "/ui/")
check(urlparse(driver.current_url).path == "/ui/login", "without a session /ui/ leads to the sign-in")
audit("sign-in page")
sign_in(args.ingest)
check("cannot sign in" in driver.page_source and driver.get_cookie(cookie_name) is None,
      "an ingest token is refused, with the form again and no cookie")
audit("refused sign-in", expected_statuses=(403,))
sign_in(args.read)
check(urlparse(driver.current_url).path == "/ui/", "a read token signs in to the overview")
cookie = driver.get_cookie(cookie_name)
check(cookie and cookie["httpOnly"] and cookie.get("sameSite") == "Strict" and cookie["secure"] == args.secure,
      f"the session cookie: HttpOnly, SameSite=Strict, Secure={args.secure} ({cookie})")
check(args.read.split("_")[-1] not in cookie["value"], "the cookie does not hold the token's secret")
check(args.app in text("h1"), "the overview is the read token's app")
audit("overview")
screenshot("overview", 2400)

# Tenancy: another app's notification is a 404 page for this read token.
other = subprocess.run([args.bin, "sql", "--db", args.db, "--format", "csv",
                        f"SELECT notification_id, app_id FROM notification WHERE app_id <> '{args.app}' LIMIT 1"],
                       capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1].split(",")
driver.get(f"{origin}/ui/notifications/{other[0]}")
check(text("h1") == "Not found" and other[1] not in driver.page_source, f"another app's notification ({other[1]}) is a 404 page")
audit("404 page", expected_statuses=(404,))

# Live follow: a notification with only push.sent stored; its device bundle uploaded while the page is open.
notification = str(uuid.uuid4())
sent = int(time.time() * 1000) - 40_000
upload("/v1/events", [
    {"type": "manifest", "schema": 1, "bundle_id": str(uuid.uuid4()), "app_id": args.app, "device_id": "server"},
    {"type": "event", "ts": sent, "process": "server", "event": "push.sent", "notification_id": notification,
     "category": "DAILY_PICK", "mutable_content": True, "has_alert": True, "payload_bytes": 700, "device_id": "d-live"},
])
driver.get(f"{origin}/ui/notifications/{notification}")
check(text("#cause") == "awaiting_device_logs" and text("#live") != "", "the page of a push.sent alone follows it live")
audit("live why page")
upload("/v1/bundles", [
    {"type": "manifest", "schema": 1, "bundle_id": str(uuid.uuid4()), "app_id": args.app, "device_id": "d-live",
     "uploaded_at": int(time.time() * 1000)},
    {"type": "event", "ts": sent + 300, "process": "service", "event": "service.received", "notification_id": notification, "category": "DAILY_PICK"},
    {"type": "event", "ts": sent + 30_300, "process": "service", "event": "service.expired", "notification_id": notification, "elapsed_ms": 30_000},
])
uploaded = time.monotonic()
WebDriverWait(driver, 10, poll_frequency=0.05, ignored_exceptions=(StaleElementReferenceException, NoSuchElementException)).until(
    lambda d: text("#cause") == "service_timeout")
seconds = time.monotonic() - uploaded
rows = len(driver.find_elements(By.CSS_SELECTOR, "table.timeline tbody tr"))
check(seconds <= 2.0 and rows == 3, f"live follow: the new cause and records shown {seconds:.2f} s after the upload, no reload ({rows} rows)")
check(console_errors() == [], "live follow: no console error")

# Search by cause, as an admin (the demo's examples span its three apps), to each example's why page.
driver.find_element(By.CSS_SELECTOR, "form.logout button").click()
WebDriverWait(driver, 10).until(lambda d: urlparse(d.current_url).path == "/ui/login")
check(urlparse(driver.current_url).path == "/ui/login" and driver.get_cookie(cookie_name) is None, "sign out ends the session")
sign_in(args.admin)
for cause in DEMO_CAUSES:
    driver.get(origin + "/ui/search")
    Select(driver.find_element(By.ID, "s-cause")).select_by_value(cause)
    driver.find_element(By.CSS_SELECTOR, "form.search button").click()
    WebDriverWait(driver, 10).until(lambda d: f"cause={cause}" in d.current_url)
    if cause == DEMO_CAUSES[0]:
        audit("search results")
    # The demo's own notifications, not the one live follow made.
    links = [link for link in driver.find_elements(By.CSS_SELECTOR, "table.results tbody a") if notification not in link.text.lower()]
    check(links, f"search cause={cause} lists notifications")
    links[0].click()
    WebDriverWait(driver, 10).until(lambda d: urlparse(d.current_url).path.startswith("/ui/notifications/"))
    url = urlparse(driver.current_url)
    notification_id = unquote(url.path.rsplit("/", 1)[-1])
    app = parse_qs(url.query)["app"][0]
    cli = json.loads(subprocess.run([args.bin, "why", "--db", args.db, "--app", app, notification_id, "--format", "json"],
                                    capture_output=True, text=True).stdout)
    messages = [" ".join(finding["message"].split()) for finding in cli["findings"]]
    fixes = [" ".join(finding["fix"].split()) for finding in cli["findings"]]
    check(text("#cause") == cli["cause"] == cause and texts(".finding .message") == messages and texts(".finding .fix-text") == fixes,
          f"{cause}: the why page of {notification_id} says what pushtrace why --format json says")
    if cause == "service_timeout":
        audit("why page")
        screenshot("why", 3000)

# The report page's figures equal the report JSON's.
# Last week's: this week's grows with each run's live-follow upload, and the page keeps a report for a minute.
week = subprocess.run(["date", "-u", "-d", "7 days ago", "+%G-W%V"], capture_output=True, text=True).stdout.strip()
driver.get(f"{origin}/ui/reports/weekly?app={args.app}&week={week}")
status, _, body = http("GET", f"/v1/reports/weekly?app={args.app}&week={week}", args.admin, headers={"Accept": "application/json"})
report = json.loads(body)
service = report["service"]
figures = {"notifications": report["notifications"], "ran": service["ran"], "timeouts": service["timeouts"]}
shown = {key: int(text(f"#fig-{key}")) for key in figures}
causes = {element.get_attribute("data-cause"): int(element.text) for element in driver.find_elements(By.CSS_SELECTOR, "td[data-cause]")}
durations = {element.get_attribute("data-percentile"): element.text for element in driver.find_elements(By.CSS_SELECTOR, "td[data-percentile]")}
audience = {element.get_attribute("data-audience"): int(element.text) for element in driver.find_elements(By.CSS_SELECTOR, "td[data-audience]")}
expected_durations = {key: str(value) for key, value in (service.get("duration_ms") or {}).items()}
check(status == 200 and shown == figures and {k: v for k, v in causes.items() if v} == report["causes"]
      and durations == (expected_durations or {"p50": "–", "p90": "–", "p99": "–"})
      and all(audience[key] == report["audience"][key] for key in audience) and len(audience) == 6,
      f"the report page of {week} shows the report JSON's figures ({figures['notifications']} notifications, {len(causes)} causes)",
      detail=f"page {shown} {causes} {durations} {audience}; JSON {figures} {report['causes']} {service.get('duration_ms')} {report['audience']}")
audit("report page")
screenshot("report", 3200)

driver.get(origin + "/ui/alerts")
check("service_timeout_spike" in driver.page_source, "the alerts page shows the incident's alert")
driver.find_element(By.LINK_TEXT, "Its notifications").click()
WebDriverWait(driver, 10).until(lambda d: urlparse(d.current_url).path == "/ui/search")
check(len(driver.find_elements(By.CSS_SELECTOR, "table.results tbody tr")) > 0, "an alert links to its notifications")
audit("alerts page")

# Bad input: a clear page, escaped.
driver.get(origin + "/ui/reports/weekly?app=" + args.app + "&week=%3Cscript%3Ealert(1)%3C/script%3E")
check("is not an ISO week" in driver.page_source and "<script>alert" not in driver.page_source, "a malformed week is a clear page")
audit("error page", expected_statuses=(400,))

# Nothing left the server's origin.
requests = []
for entry in driver.get_log("performance"):
    message = json.loads(entry["message"])["message"]
    if message["method"] == "Network.requestWillBeSent":
        requests.append(message["params"]["request"]["url"])
foreign = [url for url in requests if not (url.startswith(origin + "/") or url.startswith("data:") or url.startswith("about:"))]
check(requests and not foreign, f"{len(requests)} requests, none to another origin" + ("" if not foreign else f": {foreign[:5]}"))
driver.quit()
print(f"ui-test: {checks} checks passed at {origin}")
