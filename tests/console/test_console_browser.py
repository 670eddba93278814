"""The web console in a real browser (headless chromium through Selenium) against a real gateway on its HTTP port,
with password logins: refusals (a wrong password, a page without the cookie, a form without the CSRF token), every
page rendering (a screenshot of each is written to bench/out/console_screenshots/, its path printed), a table comment
holding markup shown as text, a stream's freshness chart gaining a point after a file lands, and a running query
that another user neither sees nor cancels, that an admin sees, and that its owner cancels from the overview: the
owner's PyHive call then fails with a cancel error; the owner's next one an admin cancels from the page."""

from __future__ import annotations

import base64
import http.client
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from credentials import password_auth
from pyhive_helpers import land_named, poll_until
from selenium.webdriver.common.by import By
from selenium.webdriver.support.wait import WebDriverWait
from thrift.transport.THttpClient import THttpClient

PASSWORDS = {"alice": "alice-pw", "bob": "bob-pw", "root": "root-pw"}
DATABASE = "console_db"
EVIL = '<script>document.title="pwned"</script><img src=x onerror="document.title=1">'
LONG_QUERY = "SELECT count(*) AS n FROM range(0, 1000000000000) WHERE id % 7 = 3"


@pytest.fixture(scope="module")
def console_gateway(start_gateway: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return start_gateway({
        "server": {"http_port": 0, "allow_plaintext": True},
        "auth": password_auth(tmp_path_factory.mktemp("console_auth"), PASSWORDS),
        "security": {"admins": ["root"]},
    })


# a stable folder, ignored by git (bench/out/), each page's file overwritten by the next run: a note can name them
SCREENSHOTS = Path(__file__).resolve().parents[2] / "bench" / "out" / "console_screenshots"


@pytest.fixture(scope="module")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


def base_url(gateway: Any) -> str:
    return f"http://127.0.0.1:{gateway.server.http_port}"


def connect_as(gateway: Any, user: str) -> Any:
    from pyhive import hive

    transport = THttpClient(f"{base_url(gateway)}/cliservice")
    secret = base64.b64encode(f"{user}:{PASSWORDS[user]}".encode()).decode()
    transport.setCustomHeaders({"Authorization": f"Basic {secret}"})
    return hive.connect(thrift_transport=transport, username=user)


def run_as(gateway: Any, user: str, *statements: str) -> None:
    connection = connect_as(gateway, user)
    try:
        cursor = connection.cursor()
        for statement in statements:
            cursor.execute(statement)
    finally:
        connection.close()


@pytest.fixture(scope="module")
def pipeline(console_gateway: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """alice's streaming table over a folder (with a comment holding markup) and a materialized view over it."""
    folder = tmp_path_factory.mktemp("console_landing")
    run_as(console_gateway, "alice", f"DROP DATABASE IF EXISTS {DATABASE} CASCADE", f"CREATE DATABASE {DATABASE}")
    land_named(folder, "first.json", [{"id": i, "name": f"n{i}"} for i in range(5)])
    escaped = EVIL.replace("'", "\\'")
    run_as(console_gateway, "alice",
           f"CREATE STREAMING TABLE {DATABASE}.events COMMENT '{escaped}' AS SELECT id, name "
           f"FROM STREAM read_files('{folder}', format => 'json', schema => 'id INT, name STRING')")
    store = console_gateway.service.catalog
    poll_until(lambda: any(e.event_type == "flow_progress" for e in store.event_log(DATABASE, "events")),
               "the stream's first micro-batch", 180)
    run_as(console_gateway, "alice",
           f"CREATE MATERIALIZED VIEW {DATABASE}.totals COMMENT 'gold' AS SELECT count(*) AS n FROM {DATABASE}.events")
    yield folder
    run_as(console_gateway, "alice", f"DROP DATABASE IF EXISTS {DATABASE} CASCADE")


def login(driver: Any, gateway: Any, user: str, password: str | None = None) -> None:
    driver.get(f"{base_url(gateway)}/console/login")
    driver.delete_all_cookies()
    driver.get(f"{base_url(gateway)}/console/login")
    driver.find_element(By.ID, "user-name").send_keys(user)
    driver.find_element(By.ID, "password").send_keys(PASSWORDS[user] if password is None else password)
    driver.find_element(By.ID, "login-submit").click()
    # the click returns before the answer is loaded: wait for the overview, or the refusal
    WebDriverWait(driver, 60).until(lambda d: d.find_elements(By.ID, "logout") or d.find_elements(By.ID, "login-error"))


def shoot(driver: Any, folder: Path, name: str) -> Path:
    path = folder / f"{name}.png"
    driver.save_screenshot(str(path))
    assert path.stat().st_size > 1000
    print(f"screenshot: {path}")
    return path


def cookie_and_csrf(driver: Any) -> tuple[str, str]:
    cookie = driver.get_cookie("sluicegate_console")
    csrf = driver.find_element(By.CSS_SELECTOR, "input[name=csrf]").get_attribute("value")
    return cookie["value"], csrf


def post_form(gateway: Any, path: str, cookie: str | None, form: dict[str, str],
              origin: str | None = None) -> tuple[int, dict[str, str]]:
    connection = http.client.HTTPConnection("127.0.0.1", gateway.server.http_port, timeout=30)
    try:
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if origin is not None:
            headers["Origin"] = origin
        if cookie is not None:
            headers["Cookie"] = f"sluicegate_console={cookie}"
        connection.request("POST", path, body=urlencode(form), headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}
    finally:
        connection.close()


def test_wrong_password_is_refused_and_pages_need_the_cookie(console_gateway: Any, browser: Any,
                                                             screenshots: Path) -> None:
    browser.delete_all_cookies()
    browser.get(f"{base_url(console_gateway)}/console/streams")
    assert browser.current_url.endswith("/console/login"), browser.current_url
    login(browser, console_gateway, "alice", "not-her-password")
    error = browser.find_element(By.ID, "login-error").text
    assert "wrong user name or password" in error
    assert browser.get_cookie("sluicegate_console") is None
    shoot(browser, screenshots, "login-refused")
    status, headers = post_form(console_gateway, "/console/queries/cancel", None, {"query_id": "x"})
    assert status == 303 and headers["location"] == "/console/login"
    status, headers = post_form(console_gateway, "/console/login", None, {"user": "bob", "password": "bob-pw"})
    assert status == 303 and headers["location"] == "/console/"
    cookie = headers["set-cookie"]
    assert post_form(console_gateway, "/console/login", None, {"user": "bob", "password": "bob-pw"},
                     origin="https://evil.example")[0] == 403        # a login forged from another site's page
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/console" in cookie


def test_a_disabled_console_is_not_served(start_gateway: Any) -> None:
    gateway = start_gateway({"server": {"http_port": 0}, "console": {"enabled": False}})
    connection = http.client.HTTPConnection("127.0.0.1", gateway.server.http_port, timeout=30)
    try:
        connection.request("GET", "/console/login")
        response = connection.getresponse()
        assert response.status == 404 and b"Log in" not in response.read()
    finally:
        connection.close()


def test_overview_renders_and_a_form_without_the_csrf_token_is_refused(console_gateway: Any, browser: Any,
                                                                      screenshots: Path) -> None:
    login(browser, console_gateway, "alice")
    assert browser.current_url.endswith("/console/"), browser.current_url
    assert browser.find_element(By.ID, "user").text == "alice"
    health = browser.find_element(By.ID, "health").text
    assert "catalog" in health and "Spark (JVM)" in health
    assert "0.1.0" in browser.page_source
    shoot(browser, screenshots, "overview")
    cookie, csrf = cookie_and_csrf(browser)
    assert post_form(console_gateway, "/console/queries/cancel", cookie, {"query_id": "x"})[0] == 403
    assert post_form(console_gateway, "/console/queries/cancel", cookie, {"query_id": "x", "csrf": "forged"})[0] == 403
    status, headers = post_form(console_gateway, "/console/queries/cancel", cookie, {"query_id": "x", "csrf": csrf})
    assert status == 303 and "refused=x" in headers["location"] and "no+running+statement" in headers["location"]
    browser.find_element(By.ID, "logout").click()
    WebDriverWait(browser, 60).until(lambda d: d.find_elements(By.ID, "login"))
    assert browser.current_url.endswith("/console/login")
    browser.get(f"{base_url(console_gateway)}/console/")
    assert browser.current_url.endswith("/console/login")   # the login ended on the server, not just the cookie


def test_history_page_lists_a_users_own_statements_and_filters_them(console_gateway: Any, browser: Any,
                                                                     screenshots: Path) -> None:
    marker = f"hist_{uuid.uuid4().hex[:8]}"
    # the text is kept with its literals redacted: the marker is in names
    run_as(console_gateway, "alice", f"SELECT 1 AS a_{marker}", f"SELECT 2 AS b_{marker}")
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
        run_as(console_gateway, "alice", f"SELECT * FROM missing_{marker}")
    run_as(console_gateway, "bob", f"SELECT 3 AS bob_{marker}")
    login(browser, console_gateway, "alice")

    def rows(query: str) -> list[str]:
        browser.get(f"{base_url(console_gateway)}/console/history?{query}")
        return [row.text for row in browser.find_elements(By.CSS_SELECTOR, "#history tbody tr")]

    WebDriverWait(browser, 30).until(lambda _: len([r for r in rows(f"text={marker}") if marker in r]) == 3)
    found = rows(f"text={marker}")
    assert all("alice" in row for row in found) and not any(f"bob_{marker}" in row for row in found)
    failed = rows(f"status=FAILED&text={marker}")
    assert len(failed) == 1 and "TABLE_OR_VIEW_NOT_FOUND" in failed[0]
    assert browser.find_element(By.NAME, "text").get_attribute("value") == marker
    shoot(browser, screenshots, "history")
    login(browser, console_gateway, "root")          # an admin sees every user's
    WebDriverWait(browser, 30).until(lambda _: any(f"bob_{marker}" in r for r in rows(f"text={marker}")))
    assert len(rows(f"user=bob&text={marker}")) == 1


def test_streams_page_shows_markup_in_a_comment_as_text(console_gateway: Any, browser: Any, pipeline: Path,
                                                         screenshots: Path) -> None:
    login(browser, console_gateway, "alice")
    browser.get(f"{base_url(console_gateway)}/console/streams")
    listing = browser.find_element(By.ID, "streams")
    assert f"{DATABASE}.events" in listing.text and EVIL in listing.text
    assert not browser.find_elements(By.CSS_SELECTOR, "main script, main img")
    assert browser.title != "pwned" and browser.title != "1"
    shoot(browser, screenshots, "streams")
    login(browser, console_gateway, "bob")                # bob holds no grant on alice's table
    browser.get(f"{base_url(console_gateway)}/console/streams")
    assert f"{DATABASE}.events" not in browser.page_source
    browser.get(f"{base_url(console_gateway)}/console/stream?name={DATABASE}.events")
    assert "no streaming table" in browser.page_source and "flow_progress" not in browser.page_source


def chart_points(driver: Any) -> int:
    return int(driver.find_element(By.ID, "freshness-chart").get_attribute("data-points"))


def test_freshness_chart_moves_after_a_file_lands(console_gateway: Any, browser: Any, pipeline: Path,
                                                  screenshots: Path) -> None:
    login(browser, console_gateway, "alice")
    page = f"{base_url(console_gateway)}/console/stream?name={DATABASE}.events"
    browser.get(page)
    before = chart_points(browser)
    assert before >= 1
    assert "RUNNING" in browser.find_element(By.ID, "stream-facts").text
    land_named(pipeline, f"more-{time.time_ns()}.json", [{"id": 100 + i, "name": "later"} for i in range(3)])

    def moved() -> bool:
        browser.get(page)
        return chart_points(browser) > before

    poll_until(moved, "a new point in the freshness chart", 120)
    assert browser.find_element(By.ID, "throughput-chart").get_attribute("data-points") != "0"
    assert "flow_progress" in browser.find_element(By.ID, "events").text
    shoot(browser, screenshots, "stream")


def test_views_and_lineage_pages(console_gateway: Any, browser: Any, pipeline: Path, screenshots: Path) -> None:
    run_as(console_gateway, "alice", f"REFRESH MATERIALIZED VIEW {DATABASE}.totals")
    login(browser, console_gateway, "alice")
    browser.get(f"{base_url(console_gateway)}/console/views")
    text = browser.find_element(By.TAG_NAME, "main").text
    assert f"{DATABASE}.totals" in text and "gold" in text
    rows = browser.find_elements(By.CSS_SELECTOR, f"[id='refreshes-{DATABASE}.totals'] tbody tr")
    outcomes = [row.text for row in rows]
    assert len(outcomes) >= 2, outcomes                 # the create and the refresh, each with its reason
    shoot(browser, screenshots, "views")
    browser.get(f"{base_url(console_gateway)}/console/lineage")
    graph = browser.find_element(By.ID, "lineage")
    ids = [node.get_attribute("data-id") for node in graph.find_elements(By.CSS_SELECTOR, "g.node")]
    assert f"STREAMING_TABLE:{DATABASE}.events" in ids and f"MATERIALIZED_VIEW:{DATABASE}.totals" in ids
    assert any(i.startswith("source:files ") for i in ids), ids
    edges = {(e.get_attribute("data-from"), e.get_attribute("data-to"))
             for e in graph.find_elements(By.CSS_SELECTOR, "line.edge")}
    assert (f"STREAMING_TABLE:{DATABASE}.events", f"MATERIALIZED_VIEW:{DATABASE}.totals") in edges
    shoot(browser, screenshots, "lineage")


def test_a_running_query_is_cancelled_by_its_owner_from_the_overview(console_gateway: Any, browser: Any,
                                                                     screenshots: Path) -> None:
    outcome: dict[str, Any] = {}
    connection = connect_as(console_gateway, "alice")

    def run() -> None:
        try:
            connection.cursor().execute(LONG_QUERY)
            outcome["finished"] = True
        except BaseException as exc:  # noqa: BLE001 - inspected by the test
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        sessions = console_gateway.service.sessions
        operation = poll_until(lambda: next((op for s in sessions.list() if s.user == "alice"
                                             for op in s.operations() if op.state.value == "RUNNING"), None),
                               "alice's query to run", 120)
        query_id = operation.handle.hex

        # bob neither sees it nor cancels it
        login(browser, console_gateway, "bob")
        assert query_id not in browser.page_source
        cookie, csrf = cookie_and_csrf(browser)
        status, headers = post_form(console_gateway, "/console/queries/cancel", cookie,
                                    {"query_id": query_id, "csrf": csrf})
        # the same rule and answer as SQL's kill_query (tests/security/test_kill_query.py): not bob's to kill
        assert status == 303 and "refused=" in headers["location"], headers
        assert "only+its+owner+or+an+admin" in headers["location"], headers["location"]
        assert operation.state.value == "RUNNING"
        shoot(browser, screenshots, "overview-other-user")

        # an admin sees it
        login(browser, console_gateway, "root")
        assert query_id in browser.find_element(By.ID, "queries").text
        assert "alice" in browser.find_element(By.ID, "sessions").text

        # alice cancels it from the page
        login(browser, console_gateway, "alice")
        queries = browser.find_element(By.ID, "queries")
        assert query_id in queries.text and "RANGE(?, ?)" in queries.text   # literals redacted, as in the history
        shoot(browser, screenshots, "overview-running-query")
        queries.find_element(By.CSS_SELECTOR, f"button.cancel[data-query='{query_id}']").click()
        notice = WebDriverWait(browser, 60).until(lambda d: d.find_elements(By.ID, "notice"))
        assert query_id in notice[0].text
        thread.join(timeout=60)
        assert not thread.is_alive(), "the cancelled query's PyHive call did not return"
        error = outcome.get("error")
        assert error is not None, outcome
        status = error.args[0].status             # pyhive's OperationalError carries the TStatus
        assert status.sqlState == "57014" and "killed by alice" in status.errorMessage, status
        # killed: it failed, then the synchronous execute closed it
        assert operation.state.value in ("ERROR", "CLOSED")
        assert query_id not in browser.find_element(By.ID, "queries").text

        # an admin cancels alice's next query from the page
        outcome.clear()
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        operation = poll_until(lambda: next((op for s in sessions.list() if s.user == "alice"
                                             for op in s.operations() if op.state.value == "RUNNING"), None),
                               "alice's second query to run", 120)
        login(browser, console_gateway, "root")
        queries = browser.find_element(By.ID, "queries")
        queries.find_element(By.CSS_SELECTOR, f"button.cancel[data-query='{operation.handle.hex}']").click()
        notice = WebDriverWait(browser, 60).until(lambda d: d.find_elements(By.ID, "notice"))
        assert operation.handle.hex in notice[0].text
        thread.join(timeout=60)
        assert not thread.is_alive(), "the query the admin cancelled did not return"
        status = outcome["error"].args[0].status
        assert status.sqlState == "57014" and "killed by root" in status.errorMessage, status
    finally:
        if thread.is_alive():
            operation_list = [op for s in console_gateway.service.sessions.list() for op in s.operations()
                              if s.user == "alice"]
            for op in operation_list:
                op.cancel()
            thread.join(timeout=30)
        connection.close()
