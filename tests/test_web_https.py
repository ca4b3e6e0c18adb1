"""`erudit serve --https`, as a phone's browser needs it to let a page use the camera: the
certificate made once for this machine and kept, pages and event streams over TLS, a
plain-http request sent on to https, connections that say nothing holding up no one, and the
command started and stopped."""

from __future__ import annotations

import datetime
import hashlib
import http.client
import json
import os
import re
import signal
import socket
import ssl
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from test_web_helpers import new_game

from companion_app.cli import main
from companion_app.web import create_app, make_server
from companion_app.web.certificate import CERT_FILE, INSTALL, certificate
from companion_app.web.events import close_streams

REPO = Path(__file__).resolve().parents[1]
DEADLINE_S = 30      # the longest any wait here lasts (a bound, not a measure)
READ_TIMEOUT_S = 2

# one pytest-xdist worker runs the whole module, so its module fixtures are made once
pytestmark = pytest.mark.xdist_group("https")


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    """(app, port, certificate) of the app served over https on 127.0.0.1."""
    data = tmp_path_factory.mktemp("https") / "data"
    app = create_app(data, {"PHOTO_WORKERS": 0, "ALLOWED_HOSTS": {"erudit.test"}})
    made = certificate(data, "127.0.0.1")
    server = make_server(app, "127.0.0.1", 0, read_timeout=READ_TIMEOUT_S, tls=made.context())
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield app, server.effective_port, made
    close_streams(app)
    server.close()
    thread.join(DEADLINE_S)


def trusting(made) -> ssl.SSLContext:
    """A client that trusts only this certificate, names and addresses checked."""
    return ssl.create_default_context(cafile=str(made.cert))


def https_get(port: int, made, path: str = "/", host: str = "127.0.0.1",
              headers: dict | None = None) -> http.client.HTTPResponse:
    conn = http.client.HTTPSConnection(host, port, context=trusting(made), timeout=DEADLINE_S)
    conn.request("GET", path, headers=headers or {})
    answer = conn.getresponse()
    answer.read()
    conn.close()
    return answer


def test_the_certificate_is_made_once_and_kept_for_this_machine(tmp_path):
    first = certificate(tmp_path, "192.0.2.7")
    again = certificate(tmp_path, "192.0.2.7")
    assert again.fingerprint == first.fingerprint and not again.renewed
    assert stat.S_IMODE(first.key.stat().st_mode) == 0o600
    cert = x509.load_pem_x509_certificate(first.cert.read_bytes())
    der = ssl.PEM_cert_to_DER_cert(first.cert.read_text())
    assert first.fingerprint == hashlib.sha256(der).digest().hex(":").upper()
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "localhost" in names.get_values_for_type(x509.DNSName)
    host = socket.gethostname().lower().split(".")[0]
    assert f"{host}.local" in names.get_values_for_type(x509.DNSName)
    addresses = {str(ip) for ip in names.get_values_for_type(x509.IPAddress)}
    assert {"127.0.0.1", "::1", "192.0.2.7"} <= addresses

    moved = certificate(tmp_path, "192.0.2.8")      # the machine is now elsewhere
    assert moved.renewed and moved.fingerprint != first.fingerprint
    assert certificate(tmp_path, "192.0.2.8").fingerprint == moved.fingerprint


def test_a_certificate_unreadable_or_near_its_end_is_made_anew(tmp_path):
    (tmp_path / CERT_FILE).write_text("not a certificate")
    made = certificate(tmp_path, "192.0.2.7")
    assert made.renewed and made.fingerprint

    key = serialization.load_pem_private_key(made.key.read_bytes(), password=None)
    kept = x509.load_pem_x509_certificate(made.cert.read_bytes())
    now = datetime.datetime.now(datetime.UTC)
    ending = (x509.CertificateBuilder().subject_name(kept.subject).issuer_name(kept.issuer)
              .public_key(key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=10))
              .add_extension(kept.extensions.get_extension_for_class(
                  x509.SubjectAlternativeName).value, critical=False)
              .sign(key, hashes.SHA256()))
    made.cert.write_bytes(ending.public_bytes(serialization.Encoding.PEM))
    again = certificate(tmp_path, "192.0.2.7")
    assert again.renewed and again.fingerprint != made.fingerprint
    assert x509.load_pem_x509_certificate(again.cert.read_bytes()).not_valid_after_utc > (
        now + datetime.timedelta(days=365))


def test_pages_and_event_streams_are_served_over_https(secure):
    app, port, made = secure
    for host in ("127.0.0.1", "localhost"):           # the certificate names both
        answer = https_get(port, made, host=host)
        assert answer.status == 200
    assert "Secure" in answer.getheader("Set-Cookie")
    game = new_game(app.test_client())
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=trusting(made),
                                       timeout=DEADLINE_S)
    conn.request("GET", f"/g/{game}/events")
    stream = conn.getresponse()
    assert stream.getheader("Content-Type").startswith("text/event-stream")
    lines = [stream.readline() for _ in range(4)]
    conn.close()
    assert b"event: state\n" in lines

    conn = http.client.HTTPSConnection("127.0.0.1", port, context=trusting(made),
                                       timeout=DEADLINE_S)
    conn.request("GET", f"/g/{game}", headers={"Accept": "application/json"})
    state = json.loads(conn.getresponse().read())
    conn.close()
    assert state["join_url"] == f"https://127.0.0.1:{port}/g/{game}"     # the QR code's link


def raw(port: int, data: bytes) -> bytes:
    """What the server answers to `data` sent as is, until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=DEADLINE_S) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    return answer


def test_plain_http_to_the_https_port_is_sent_to_https(secure):
    _, port, made = secure
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=DEADLINE_S)
    conn.request("GET", "/boxes?lang=en")
    answer = conn.getresponse()
    assert answer.status == 307
    assert answer.getheader("Location") == f"https://127.0.0.1:{port}/boxes?lang=en"
    conn.close()
    assert raw(port, b"\x00not http at all\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    socket.create_connection(("127.0.0.1", port)).close()    # connects, says nothing, goes
    assert https_get(port, made).status == 200


def test_connections_that_say_nothing_hold_up_no_one_and_are_closed(secure):
    _, port, made = secure
    silent = [socket.create_connection(("127.0.0.1", port), timeout=DEADLINE_S)
              for _ in range(30)]
    shook = trusting(made).wrap_socket(socket.create_connection(("127.0.0.1", port)),
                                       server_hostname="127.0.0.1")
    try:
        started = time.monotonic()
        assert https_get(port, made).status == 200
        assert time.monotonic() - started < READ_TIMEOUT_S      # not after a timeout
        shook.settimeout(DEADLINE_S)
        assert silent[0].recv(1) == b"" and shook.recv(1) == b""   # closed by the server
    finally:
        for sock in [*silent, shook]:
            sock.close()


def test_without_cryptography_https_says_how_to_install_it(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "cryptography", None)      # as if not installed
    assert main(["serve", "--https", "--host", "127.0.0.1", "--port", "0",
                 "--data", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"erudit: {INSTALL}\n"


def test_erudit_serve_https_starts_serves_and_stops_on_ctrl_c(tmp_path):
    """Started as a player starts it; stopped with Ctrl+C while a page's event stream is open,
    with nothing said on stderr from start to end."""
    command = [sys.executable, "-m", "companion_app.cli", "serve", "--https",
               "--host", "127.0.0.1", "--port", "0", "--data", str(tmp_path)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as server:
        try:
            said = [server.stdout.readline() for _ in range(4)]
            address = said[1].split()[2]             # erudit: open https://127.0.0.1:PORT/ …
            fingerprint = said[3].split()[-1]
            assert address.startswith("https://127.0.0.1:"), said
            port = int(address.rstrip("/").rsplit(":", 1)[1])
            unchecked = ssl.create_default_context()
            unchecked.check_hostname, unchecked.verify_mode = False, ssl.CERT_NONE
            phone = http.client.HTTPSConnection("127.0.0.1", port, context=unchecked,
                                                timeout=DEADLINE_S)
            phone.connect()
            shown = phone.sock.getpeercert(binary_form=True)
            assert hashlib.sha256(shown).digest().hex(":").upper() == fingerprint
            game, link = start_game(phone)
            assert link == f"{address.rstrip('/')}/g/{game}"     # the QR code's link: https
            stream = open_stream(phone, game)
            assert raw(port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").startswith(
                b"HTTP/1.1 307 ")                    # plain http: nothing on the terminal
            refusing = ssl.create_default_context()  # a browser before the warning is accepted
            with pytest.raises(ssl.SSLCertVerificationError):
                refusing.wrap_socket(socket.create_connection(("127.0.0.1", port)),
                                     server_hostname="127.0.0.1")
        finally:
            server.send_signal(signal.SIGINT)
            out, err = server.communicate(timeout=DEADLINE_S)
    assert stream.read().endswith(b"\n\n")            # the stream ended, not cut
    assert err == "", err
    assert server.returncode in (0, 130)


def start_game(phone: http.client.HTTPSConnection) -> tuple[str, str]:
    """(token, link) of a new game, started over `phone` as a browser starts one."""
    phone.request("GET", "/")
    answer = phone.getresponse()
    page = answer.read().decode()
    cookie = answer.getheader("Set-Cookie").split(";")[0]
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', page)[1]
    form = f"csrf={csrf}&ruleset=erudit&player=A&player=B&word_check=warn"
    phone.request("POST", "/games", body=form, headers={
        "Cookie": cookie, "Accept": "application/json",
        "Content-Type": "application/x-www-form-urlencoded"})
    answer = phone.getresponse()
    assert answer.status == 201
    made = json.loads(answer.read())
    return made["token"], made["url"]


def open_stream(phone: http.client.HTTPSConnection, game: str) -> http.client.HTTPResponse:
    phone.request("GET", f"/g/{game}/events")
    stream = phone.getresponse()
    assert stream.readline().startswith(b"retry:")
    return stream


@pytest.mark.slow
def test_a_page_served_over_https_may_ask_for_the_camera(secure):
    """Chromium, on a name that is not this computer's own (as a phone reaches it): the page
    asked in plain http lands on https, where it is a secure context and has the camera API."""
    import shutil

    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    from test_web_browser import CHROMIUM, CHROMIUM_ARGS

    if not shutil.which(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    _, port, _ = secure
    rules = "--host-resolver-rules=MAP erudit.test 127.0.0.1"
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, rules])
        try:
            page = browser.new_context(ignore_https_errors=True).new_page()
            page.goto(f"http://erudit.test:{port}/")
            landed = page.url
            secure_context = page.evaluate(
                "window.isSecureContext && !!(navigator.mediaDevices || {}).getUserMedia")
        finally:
            browser.close()
    assert landed == f"https://erudit.test:{port}/"
    assert secure_context is True
