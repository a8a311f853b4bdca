"""The episode's certificate authority and the front's leaf certificate, made in memory at start.

EC P-256 keys keep this to a few milliseconds. The CA's key never leaves this process (nothing can sign
another certificate the episode trusts once the front is gone); its certificate is written, with the
system's roots, to the bundle every process of the episode trusts."""
from __future__ import annotations

import os
import ssl
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

SYSTEM_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt")


@dataclass(frozen=True)
class Certificates:
    ca_pem: bytes
    leaf_pem: bytes
    leaf_key_pem: bytes

    def server_context(self, alpn: str) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        # load_cert_chain reads files only: a private temporary file, gone right after
        fd, path = tempfile.mkstemp(prefix="front-tls-", suffix=".pem")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(self.leaf_key_pem + self.leaf_pem + self.ca_pem)
            ctx.load_cert_chain(path)
        finally:
            os.unlink(path)
        ctx.set_alpn_protocols([alpn])
        return ctx


def make(names: list[str], now: datetime | None = None) -> Certificates:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

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
    leaf = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
            .issuer_name(ca_name).public_key(leaf_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(end)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    return Certificates(
        ca_pem=ca_cert.public_bytes(pem), leaf_pem=leaf.public_bytes(pem),
        leaf_key_pem=leaf_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


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
