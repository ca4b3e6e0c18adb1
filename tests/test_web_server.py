"""`erudit serve`'s server on 127.0.0.1: slow or stalled connections hold no thread and are
closed after the read timeout, and one game's expensive pictures do not hold up another
phone's photo."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time

import pytest

from companion_app.web import create_app, make_server

DEADLINE_S = 30      # the longest any loop here waits for the server (a bound, not a measure)


@pytest.fixture
def served(tmp_path):
    """(app, port) of the app served by the production server with a 2 s read timeout."""
    app = create_app(tmp_path / "data", {"PHOTO_WORKERS": 1})
    server = make_server(app, "127.0.0.1", 0, read_timeout=2)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield app, server.effective_port
    server.close()
    thread.join(DEADLINE_S)


def get(port: int, path: str = "/", headers: dict | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=DEADLINE_S)
    try:
        conn.request("GET", path, headers=headers or {})
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


def stalled(port: int) -> socket.socket:
    """A connection that sends half a request and then nothing (a slow or hostile client)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE_S)
    sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    return sock


def test_stalled_connections_hold_no_thread_and_others_are_served(served):
    _, port = served
    before = threading.active_count()
    sockets = [stalled(port) for _ in range(60)]
    try:
        assert get(port)[0] == 200
        assert threading.active_count() - before < 20   # not one thread per connection
    finally:
        for sock in sockets:
            sock.close()


def test_a_stalled_connection_is_closed_after_the_read_timeout(served):
    _, port = served
    sock = stalled(port)
    end = time.monotonic() + DEADLINE_S
    closed = False
    while not closed and time.monotonic() < end:
        try:
            closed = sock.recv(1024) == b""
        except TimeoutError:
            break
    sock.close()
    assert closed


def test_the_server_answers_only_its_own_names(served):
    _, port = served
    assert get(port, headers={"Host": f"127.0.0.1:{port}"})[0] == 200
    status, body = get(port, headers={"Host": f"rebound.example:{port}",
                                      "Accept": "application/json"})
    assert status == 403 and json.loads(body)["code"] == "host_refused"


@pytest.mark.slow
def test_the_box_form_takes_a_name_in_any_script(served):
    """The name field's pattern, as the browser applies it (\\w there is ASCII only)."""
    import shutil

    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    from test_web_browser import CHROMIUM, CHROMIUM_ARGS

    if not shutil.which(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    _, port = served
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/boxes")
            field = page.locator('input[name="name"]')
            valid = {}
            for name in ("кухня", "чаи\u0306ная", "Box_2.v1", "台所", "a/b", "кухня дачи"):
                field.fill(name)
                valid[name] = field.evaluate("input => input.checkValidity()")
        finally:
            browser.close()
    assert valid == {"кухня": True, "чаи\u0306ная": True, "Box_2.v1": True, "台所": True,
                     "a/b": False, "кухня дачи": False}
