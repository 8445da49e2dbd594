"""TLS files for ``skat auth --tls``: a private CA and a server certificate signed by it.

A CA of our own, rather than one self-signed server certificate, so that the file players are
given (``ca.pem``) stays valid when the server certificate is renewed or issued for another
host: ``skat auth`` keeps an existing CA and signs a new server certificate with it.
Keys are ECDSA P-256 (every NATS client's TLS stack takes them); private keys are written
readable by the owner only.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from collections.abc import Iterable
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_DAYS = 3650
SERVER_DAYS = 825
"""The longest validity clients accept for a server certificate (Apple's limit)."""
LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")
"""Always in the server certificate: ``skat up --auth`` connects its services over loopback."""


class CertError(ValueError):
    """A given certificate or key file that cannot be used (one line for the command line)."""


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` readable by the owner only (created so: never briefly world-readable)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(path, 0o600)  # an existing file keeps its mode through O_TRUNC


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def ensure_ca(
    cert_path: Path, key_path: Path, name: str = "skatbus CA"
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """The CA in ``cert_path``/``key_path``, made if either is missing or unusable."""
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
        if isinstance(key, ec.EllipticCurvePrivateKey) and cert.not_valid_after_utc > _now() + datetime.timedelta(
            days=30
        ):
            return cert, key
    except (OSError, ValueError, TypeError):
        pass
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(_now() - datetime.timedelta(minutes=5))
        .not_valid_after(_now() + datetime.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
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
    write_private(key_path, _key_pem(key))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return cert, key


def _san(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name.strip("[]")))
    except ValueError:
        return x509.DNSName(name)


def issue_server_cert(
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    names: Iterable[str],
    cert_path: Path,
    key_path: Path,
) -> list[str]:
    """A server certificate for ``names`` (plus localhost, 127.0.0.1, ::1); returns the names."""
    wanted: list[str] = []
    for name in [*names, *LOCAL_NAMES]:
        if name and name not in wanted and name not in ("0.0.0.0", "::"):
            wanted.append(name)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, wanted[0])]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(_now() - datetime.timedelta(minutes=5))
        .not_valid_after(min(_now() + datetime.timedelta(days=SERVER_DAYS), ca_cert.not_valid_after_utc))
        .add_extension(x509.SubjectAlternativeName([_san(n) for n in wanted]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    write_private(key_path, _key_pem(key))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return wanted


def check_given(cert_file: str, key_file: str, ca_file: str | None) -> list[str]:
    """Given certificate, key and CA files exist, parse, and the key belongs to the
    certificate: a mistake is reported by ``skat auth``, not by a server that will not start.
    Returns warnings (a key file others may read)."""
    try:
        cert = x509.load_pem_x509_certificate(Path(cert_file).read_bytes())
    except OSError as exc:
        raise CertError(f"cannot read --tls-cert {cert_file}: {exc.strerror or exc}") from None
    except ValueError:
        raise CertError(f"--tls-cert {cert_file}: not a PEM certificate") from None
    try:
        key = serialization.load_pem_private_key(Path(key_file).read_bytes(), password=None)
    except OSError as exc:
        raise CertError(f"cannot read --tls-key {key_file}: {exc.strerror or exc}") from None
    except (ValueError, TypeError):
        raise CertError(f"--tls-key {key_file}: not an unencrypted PEM private key") from None
    spki = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    if key.public_key().public_bytes(*spki) != cert.public_key().public_bytes(*spki):
        raise CertError(f"--tls-key {key_file} is not the key of --tls-cert {cert_file}")
    warnings = []
    if os.stat(key_file).st_mode & 0o077:
        warnings.append(f"--tls-key {key_file} is readable by other users (chmod 600 it)")
    if ca_file:
        try:
            x509.load_pem_x509_certificates(Path(ca_file).read_bytes())
        except OSError as exc:
            raise CertError(f"cannot read --tls-ca {ca_file}: {exc.strerror or exc}") from None
        except ValueError:
            raise CertError(f"--tls-ca {ca_file}: not a PEM certificate") from None
    return warnings
