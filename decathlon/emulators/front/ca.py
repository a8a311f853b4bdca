"""The episode's certificate authority and the front's leaf certificates, made in memory.

EC P-256 keys keep this to a few milliseconds. The CA's key never leaves this process (nothing can sign
another certificate the episode trusts once the front is gone); its certificate is written, with the
system's roots, to the bundle every process of the episode trusts.

One default leaf names every routed pattern (for a client that names no host); `Certificates.mint` makes a
leaf for exactly one host, which the front serves to a client that names it (decathlon.emulators.front.sni)."""
from __future__ import annotations

import os
import ssl
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec

SYSTEM_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt")
COMMON_NAME_LIMIT = 64  # X.509's upper bound; a longer host is named by its subjectAltName alone


@dataclass(frozen=True)
class _Issuer:
    """What signing a leaf takes, kept as objects in this process only (never serialised)."""
    ca_key: ec.EllipticCurvePrivateKey
    ca_name: x509.Name
    # One key pair for every leaf: minting a leaf is then one signature, with no key generation on the TLS
    # handshake's path. A key per host would buy nothing here: one process serves them all and holds them all.
    leaf_key: ec.EllipticCurvePrivateKey
    start: datetime
    end: datetime

    def leaf(self, names: list[str]) -> bytes:
        """A server certificate for `names`, signed by the CA, as PEM."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]
                            if len(names[0]) <= COMMON_NAME_LIMIT else [])
        cert = (x509.CertificateBuilder()
                .subject_name(subject)
                .issuer_name(self.ca_name).public_key(self.leaf_key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(self.start).not_valid_after(self.end)
                # RFC 5280: critical when the subject is empty, the names being the only identity
                .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), critical=not subject)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.ca_key.public_key()),
                               critical=False)
                .sign(self.ca_key, hashes.SHA256()))
        return cert.public_bytes(serialization.Encoding.PEM)


@dataclass(frozen=True)
class Certificates:
    ca_pem: bytes
    leaf_pem: bytes  # the default leaf, for a client that names no host: every routed pattern
    leaf_key_pem: bytes
    issuer: _Issuer = field(repr=False, compare=False)

    def mint(self, host: str) -> bytes:
        """A leaf for exactly `host` (PEM). The caller decides whether the front may answer for it."""
        return self.issuer.leaf([host])

    def server_context(self, alpn: str, leaf_pem: bytes | None = None) -> ssl.SSLContext:
        """A server context offering `alpn` with `leaf_pem` (default: the default leaf) and the CA as its chain."""
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        # load_cert_chain reads files only: a private temporary file, gone right after. It holds the leaf key,
        # never the CA's.
        fd, path = tempfile.mkstemp(prefix="front-tls-", suffix=".pem")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(self.leaf_key_pem + (leaf_pem or self.leaf_pem) + self.ca_pem)
            ctx.load_cert_chain(path)
        finally:
            os.unlink(path)
        ctx.set_alpn_protocols([alpn])
        return ctx


def make(names: list[str], now: datetime | None = None) -> Certificates:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    # Valid from well before any frozen launch time (a task's clock may be set months back) to far ahead.
    start = (now or datetime.now(timezone.utc)) - timedelta(days=3650)
    end = start + timedelta(days=3650 * 3)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "decathlon"),
                         x509.NameAttribute(NameOID.COMMON_NAME, "decathlon episode CA")])
    ca_cert = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
               .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(start).not_valid_after(end)
               .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                            content_commitment=False, key_encipherment=False, data_encipherment=False,
                                            key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
               .sign(ca_key, hashes.SHA256()))
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    issuer = _Issuer(ca_key=ca_key, ca_name=ca_name, leaf_key=leaf_key, start=start, end=end)
    pem = serialization.Encoding.PEM
    return Certificates(
        ca_pem=ca_cert.public_bytes(pem), leaf_pem=issuer.leaf(names),
        leaf_key_pem=leaf_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
        issuer=issuer)


def write_bundle(certs: Certificates, folder: Path) -> Path:
    """`folder/ca-bundle.pem`: the system's roots (a process that reaches a real host still can, where the
    sandbox has a network) and the episode's CA. Written whole, then renamed: a reader never sees half."""
    system = b""
    for candidate in SYSTEM_BUNDLES:
        try:
            system = Path(candidate).read_bytes()
            break
        except OSError:
            continue
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ca.pem").write_bytes(certs.ca_pem)
    target = folder / "ca-bundle.pem"
    tmp = folder / ".ca-bundle.pem.tmp"
    tmp.write_bytes(system.rstrip(b"\n") + b"\n" + certs.ca_pem if system else certs.ca_pem)
    os.chmod(tmp, 0o644)
    os.replace(tmp, target)
    return target
