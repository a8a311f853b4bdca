"""A throwaway self-signed certificate for the HTTPS port, made at startup.

Upstream fronts Canvas with an HTTPS proxy on 20001 using a self-signed certificate; the canvas MCP
server is run with NODE_TLS_REJECT_UNAUTHORIZED=0, so any certificate for localhost serves. An EC
P-256 key keeps this to a few milliseconds (an RSA key would cost a noticeable part of the startup
budget).
"""
from __future__ import annotations

import ipaddress
import os
import ssl
import tempfile
from datetime import datetime, timedelta, timezone


def server_context() -> ssl.SSLContext:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.now(timezone.utc)
    cert = (x509.CertificateBuilder()
            .subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1)).not_valid_after(now + timedelta(days=3650))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                         x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    pem_cert = cert.public_bytes(serialization.Encoding.PEM)
    pem_key = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    # load_cert_chain reads files only: write both to a private temporary file, gone right after
    fd, path = tempfile.mkstemp(prefix="canvas-tls-", suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(pem_key + pem_cert)
        ctx.load_cert_chain(path)
    finally:
        os.unlink(path)
    return ctx
