"""The certificate `erudit serve --https` shows the phones' browsers, which allow a page the
camera only over https (or on localhost).

It is made on first use for this machine (its LAN addresses, its name, `<name>.local`,
localhost, 127.0.0.1 and ::1), signed by itself, and kept in the data folder, so a browser
that accepted it once keeps accepting it. It is made anew only when it no longer names the
address the phones reach the server at, is near its end, or cannot be read.

    >>> made = certificate("/tmp/erudit-data", "192.168.1.5")
    >>> made.fingerprint          # 'AB:CD:…', SHA-256, as a browser's certificate viewer shows it
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path

from engine.errors import EruditError
from engine.files import folder_why

CERT_FILE = "https-cert.pem"
KEY_FILE = "https-key.pem"
VALID_DAYS = 825     # the longest Apple's browsers take from a server certificate
RENEW_DAYS = 30      # made anew this close to its end, before a browser refuses it
INSTALL = "--https needs the Python package cryptography: pip install cryptography"


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path
    fingerprint: str     # SHA-256 of the certificate, as hex pairs `AB:CD:…`
    renewed: bool        # made now in place of an older one: browsers warn once more

    def context(self) -> ssl.SSLContext:
        """A server's TLS context over this certificate."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(self.cert, self.key)
        return context


def certificate(folder: str | Path, address: str | None) -> Certificate:
    """The certificate kept in `folder`, made anew unless it names `address` (the address the
    phones reach this machine at; None: no network) and has time left."""
    try:
        import cryptography  # noqa: F401  (said in one line here, not as a traceback later)
    except ImportError:
        raise EruditError(INSTALL) from None
    folder = Path(folder)
    kept = _kept(folder, address)
    if kept:
        return kept
    older = (folder / CERT_FILE).exists()
    try:
        _make(folder, address)
    except OSError as exc:
        raise EruditError(f"{folder}: cannot keep the https certificate there "
                          f"({folder_why(exc)})") from None
    made = _kept(folder, address)
    if made is None:
        raise EruditError(f"{folder / CERT_FILE}: the certificate just made cannot be read back")
    return Certificate(made.cert, made.key, made.fingerprint, renewed=older)


def _kept(folder: Path, address: str | None) -> Certificate | None:
    """The kept certificate, if it is readable, matches its key, names `address` and has
    more than RENEW_DAYS left."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    paths = Certificate(folder / CERT_FILE, folder / KEY_FILE, "", renewed=False)
    try:
        cert = x509.load_pem_x509_certificate(paths.cert.read_bytes())
        paths.context()                 # the key is there and belongs to the certificate
        covered = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (OSError, ValueError, ssl.SSLError, x509.ExtensionNotFound):
        return None
    left = cert.not_valid_after_utc - datetime.datetime.now(datetime.UTC)
    named = {str(ip) for ip in covered.get_values_for_type(x509.IPAddress)}
    named |= set(covered.get_values_for_type(x509.DNSName))
    wanted = str(_ip(address)) if address and _ip(address) else (address or "").lower()
    if left < datetime.timedelta(days=RENEW_DAYS) or (wanted and wanted not in named):
        return None
    fingerprint = cert.fingerprint(hashes.SHA256()).hex(":").upper()
    return Certificate(paths.cert, paths.key, fingerprint, renewed=False)


def covered_names(address: str | None) -> tuple[list[str], list[str]]:
    """(names, addresses) a certificate made now names: this machine's name and
    `<name>.local`, localhost, the loopback addresses, `address` (an address or a name) and
    the machine's other addresses on its networks."""
    names, addresses = ["localhost"], ["127.0.0.1", "::1"]
    try:
        host = socket.gethostname().lower()
        own = socket.gethostbyname_ex(host)[2]
    except OSError:
        host, own = "", []
    short = host.split(".")[0]
    for name in [host, short, f"{short}.local" if short else "", address or ""]:
        if name and name.isascii() and not _ip(name):
            names.append(name.lower())
    for ip in [address or "", *own]:
        if _ip(ip) and ip not in addresses and not _ip(ip).is_loopback:
            addresses.append(ip)
    return list(dict.fromkeys(names)), addresses


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _make(folder: Path, address: str | None) -> None:
    """A new key and a certificate signed with it, written in place of the kept ones."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    names, addresses = covered_names(address)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([
        x509.NameAttribute(NameOID.COMMON_NAME, names[1] if len(names) > 1 else names[0]),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Эрудит companion, made on this computer"),
    ])
    now = datetime.datetime.now(datetime.UTC)
    san = [x509.DNSName(n) for n in names] + [x509.IPAddress(ipaddress.ip_address(a))
                                              for a in addresses]
    cert = (x509.CertificateBuilder()
            .subject_name(subject).issuer_name(subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))   # a phone's clock a bit behind
            .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
            .add_extension(x509.SubjectAlternativeName(san), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    folder.mkdir(parents=True, exist_ok=True)
    _write(folder / KEY_FILE, key.private_bytes(serialization.Encoding.PEM,
                                                serialization.PrivateFormat.PKCS8,
                                                serialization.NoEncryption()), 0o600)
    _write(folder / CERT_FILE, cert.public_bytes(serialization.Encoding.PEM), 0o644)


def _write(path: Path, data: bytes, mode: int) -> None:
    """Write whole or not at all; a key is never readable by others, not even for a moment."""
    part = path.with_name(path.name + ".part")
    part.unlink(missing_ok=True)
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(part, path)
