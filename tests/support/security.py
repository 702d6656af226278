"""A TLS + SASL Apache Kafka for the security tests: certificates made here, one broker.

:func:`make_certificates` writes (PEM) a CA, a broker certificate for ``127.0.0.1`` and
``localhost`` signed by it, and a second CA that signed nothing (what a client trusting the
wrong authority has). :func:`secure_kafka` builds an :class:`ApacheKafka` with two client
listeners beside its PLAINTEXT one: ``SSL`` (TLS, no authentication) and ``SASL_SSL`` (TLS,
SASL/PLAIN and SASL/SCRAM-SHA-512), the broker's key and chain given inline as PEM.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import secrets
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kheaders.broker import ApacheKafka
from kheaders.broker._apache import Listener

USER = "alice"
PASSWORD = f"kh-{secrets.token_hex(6)}-pw"
"""The one SASL password (PLAIN and SCRAM-SHA-512): distinctive, so a leak is found by search."""


@dataclass(frozen=True)
class Certificates:
    """Paths of the PEM files :func:`make_certificates` wrote, and the PEM texts."""

    ca: Path
    """The CA that signed the broker's certificate: what a client trusts."""
    untrusted_ca: Path
    """A CA that signed nothing here: a client trusting it refuses the broker."""
    broker_key_pem: str
    broker_chain_pem: str
    """The broker's certificate, then the CA's."""


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _ca(name: str, now: dt.datetime) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def make_certificates(directory: Path) -> Certificates:
    """Write ``ca.pem`` and ``untrusted-ca.pem`` into ``directory``; return them with the
    broker's key (PKCS#8, unencrypted) and chain as PEM text."""
    now = dt.datetime.now(dt.UTC)
    ca_key, ca_cert = _ca("kheaders test CA", now)
    _, other_cert = _ca("kheaders untrusted CA", now)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    ca = directory / "ca.pem"
    ca.write_bytes(_pem(ca_cert))
    untrusted = directory / "untrusted-ca.pem"
    untrusted.write_bytes(_pem(other_cert))
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode("ascii")
    chain = (_pem(cert) + _pem(ca_cert)).decode("ascii")
    return Certificates(ca, untrusted, key_pem, chain)


def secure_kafka(certs: Certificates) -> ApacheKafka:
    """A not yet started Apache Kafka with ``SSL`` and ``SASL_SSL`` listeners (see module)."""
    plain = "org.apache.kafka.common.security.plain.PlainLoginModule"
    scram = "org.apache.kafka.common.security.scram.ScramLoginModule"
    properties = {
        # the broker's key and chain inline (KIP-651); no ssl.key.password: the key is clear
        "ssl.keystore.type": "PEM",
        "ssl.keystore.key": certs.broker_key_pem,
        "ssl.keystore.certificate.chain": certs.broker_chain_pem,
        "ssl.client.auth": "none",
        "listener.name.sasl_ssl.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": (
            f'{plain} required user_{USER}="{PASSWORD}";'
        ),
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": f"{scram} required;",
    }
    return ApacheKafka(
        listeners=[Listener("SSL", "SSL"), Listener("SASL_SSL", "SASL_SSL")],
        properties=properties,
        scram_users={USER: PASSWORD},
    )


def client_settings(kafka: ApacheKafka, certs: Certificates, how: str) -> dict[str, object]:
    """librdkafka settings for one way in: ``ssl``, ``plain`` or ``scram`` (SASL over TLS)."""
    if how == "ssl":
        return {
            "bootstrap.servers": kafka.address("SSL"),
            "security.protocol": "SSL",
            "ssl.ca.location": str(certs.ca),
        }
    mechanism = {"plain": "PLAIN", "scram": "SCRAM-SHA-512"}[how]
    return {
        "bootstrap.servers": kafka.address("SASL_SSL"),
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": str(certs.ca),
        "sasl.mechanism": mechanism,
        "sasl.username": USER,
        "sasl.password": PASSWORD,
    }
