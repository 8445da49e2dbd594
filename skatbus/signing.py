"""Signed run folders: the operator's ed25519 signature over a tournament's files.

Why. ``skat verify`` re-derives every card and every score from the archive, but an archive
can be replaced wholesale by another one that is internally consistent. A signature binds the
published files to one key, so an entrant who recorded the operator's public key (printed
when the tournament starts) can tell the files it is shown from the ones the operator wrote.

The key is an NKey seed (``S...``): an NKey is an ed25519 key pair, so the services' user
key that ``skat auth`` writes can sign, and no new kind of key file is needed. The signature
is over ``signature.json`` itself without its ``signature`` field, in canonical JSON (sorted
keys, no spaces): that object names the scheme, the public key, the tournament and the SHA-256
of every signed file, so changing any file, or the list, breaks it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import nacl.exceptions
import nacl.signing
import nkeys

from .errors import UsageError

SCHEME: Final = "ed25519-nkey/1"
SIGNATURE_FILE: Final = "signature.json"
RUN_FILES: Final = ("results.json", "archive.jsonl", "tournament.jsonl", "standings.csv")
"""What a run folder's signature covers (``write_results`` writes them all)."""

MAX_KEY_FILE_BYTES: Final = 64 * 1024
_PLAIN_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
"""A signed file's name: a file of the run folder itself, never a path out of it."""


class SigningKeyError(UsageError, ValueError):
    """A signing key file that cannot be used: one line for the command line."""


def canonical(obj: Any) -> bytes:
    """The bytes a signature is over: sorted keys, no spaces, so that any writer of the same
    object produces the same bytes."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _seed_in(data: bytes, name: str) -> bytes:
    """The seed a key file holds: a bare seed (what ``skat auth`` writes) or the seed block of
    a decorated ``.creds`` file."""
    lines = [line.strip() for line in data.splitlines()]
    if any(b"NKEY SEED" in line for line in lines):
        start = next(i for i, line in enumerate(lines) if b"NKEY SEED" in line)
        seed = next((line for line in lines[start + 1 :] if line), b"")
    else:
        words = data.split()
        if len(words) != 1:
            raise SigningKeyError(f"{name}: not an NKey seed (want one line S..., as skat auth writes)")
        seed = words[0]
    check_seed(seed, name)
    return seed


def check_seed(seed: bytes, name: str = "the signing key") -> str:
    """The public key of an NKey seed; ``SigningKeyError`` saying why it is none (any kind of
    NKey signs alike: user, account, operator or server)."""
    if not seed.startswith(b"S"):
        raise SigningKeyError(f"{name}: not an NKey seed (an NKey seed starts with S)")
    try:
        raw = base64.b32decode(seed + b"=" * (-len(seed) % 8))
    except (binascii.Error, ValueError):
        raise SigningKeyError(f"{name}: not an NKey seed (not base32)") from None
    if len(raw) != 36 or nkeys.crc16_checksum(raw[:-2]) != raw[-2:]:
        raise SigningKeyError(f"{name}: not a valid NKey seed (damaged or truncated?)")
    try:
        pair = nkeys.from_seed(bytearray(seed))
        key = bytes(pair.public_key).decode()
    except (nkeys.NkeysError, ValueError, TypeError):
        raise SigningKeyError(f"{name}: not a valid NKey seed (damaged or truncated?)") from None
    return key


def load_or_create_key(path: Path) -> bytes:
    """The seed in ``path``; a new user seed written there (0600, a new parent directory
    0700) when there is no such file, so the same key signs every run of an output folder."""
    name = str(path)
    if path.exists():
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_KEY_FILE_BYTES + 1)
        except OSError as exc:
            raise SigningKeyError(f"cannot read signing key {name}: {exc.strerror or exc}") from None
        if len(data) > MAX_KEY_FILE_BYTES:
            raise SigningKeyError(f"{name}: too big for an NKey seed file")
        return _seed_in(data, name)
    seed = bytes(nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER))
    try:
        if not path.parent.exists():
            path.parent.mkdir(parents=True)
            os.chmod(path.parent, 0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(seed + b"\n")
    except OSError as exc:
        raise SigningKeyError(f"cannot write signing key {name}: {exc.strerror or exc}") from None
    return seed


def public_key_of(seed: bytes) -> str:
    """The public NKey (``U...``) of a seed: what entrants record to check the signature."""
    return check_seed(bytes(seed))


def check_public_key(key: str) -> bytes:
    """The raw ed25519 key of a public NKey, or ``ValueError`` saying why ``key`` is none."""
    text = key.strip()
    try:
        raw = base64.b32decode(text + "=" * (-len(text) % 8))
    except (binascii.Error, ValueError):
        raise ValueError(f"{key!r} is not an NKey public key (not base32)") from None
    if len(raw) != 35 or not nkeys.valid_public_prefix_byte(raw[0]) or nkeys.crc16_checksum(raw[:-2]) != raw[-2:]:
        raise ValueError(f"{key!r} is not an NKey public key (U..., A..., O... or N..., 56 characters)")
    return raw[1:33]


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _tournament_of(run_dir: Path) -> str:
    """The tournament a run folder holds, as its results.json names it (else the folder's name)."""
    try:
        named = json.loads((run_dir / "results.json").read_text()).get("tournament")
    except (OSError, ValueError, AttributeError):
        named = None
    return named if isinstance(named, str) else run_dir.name


def sign_run(run_dir: Path, seed: bytes, files: Sequence[str] = RUN_FILES) -> dict[str, Any]:
    """Write ``run_dir/signature.json`` over ``files`` (each must exist) and return it."""
    pair = nkeys.from_seed(bytearray(seed))
    body: dict[str, Any] = {
        "scheme": SCHEME,
        "key": public_key_of(seed),
        "files": {name: file_digest(run_dir / name) for name in files},
        "tournament": _tournament_of(run_dir),
    }
    signed = dict(body, signature=base64.b64encode(pair.sign(canonical(body))).decode("ascii"))
    pair.wipe()
    tmp = run_dir / (SIGNATURE_FILE + ".tmp")
    tmp.write_text(json.dumps(signed, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, run_dir / SIGNATURE_FILE)
    return signed


def read_signature(run_dir: Path) -> dict[str, Any] | None:
    """signature.json as an object, or None when there is none or it is no JSON object."""
    try:
        doc = json.loads((run_dir / SIGNATURE_FILE).read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def check_signature(run_dir: Path, expect_key: str | None = None) -> list[str]:
    """What is wrong with ``run_dir``'s signature, one line each (empty when it holds): no
    signature.json, a signed file changed or missing, a run file left unsigned, a signature
    that does not verify, or one by another key than ``expect_key``."""
    path = run_dir / SIGNATURE_FILE
    if not path.exists():
        return [f"signature: no {SIGNATURE_FILE}: the run is not signed"]
    doc = read_signature(run_dir)
    if doc is None:
        return [f"signature: {SIGNATURE_FILE} is not a JSON object"]
    shape = _shape_problem(doc)
    if shape:
        return [f"signature: {SIGNATURE_FILE} {shape}"]
    key: str = doc["key"]
    problems: list[str] = []
    if expect_key is not None and key != expect_key.strip():
        problems.append(f"signature: signed by {key}, not by {expect_key.strip()} (--key)")
    try:
        raw_key = check_public_key(key)
    except ValueError as exc:
        return [*problems, f"signature: {exc}"]
    body = {k: v for k, v in doc.items() if k != "signature"}
    try:
        signature = base64.b64decode(doc["signature"], validate=True)
        nacl.signing.VerifyKey(raw_key).verify(canonical(body), signature)
    except (binascii.Error, ValueError, nacl.exceptions.BadSignatureError):  # nacl's ValueError is one
        problems.append(f"signature does not verify: {SIGNATURE_FILE} is not what key {key} signed")
    problems += _file_problems(run_dir, doc["files"])
    return problems


def _shape_problem(doc: Mapping[str, Any]) -> str:
    if doc.get("scheme") != SCHEME:
        return f"has scheme {json.dumps(doc.get('scheme'))}, not {SCHEME}, the one this skatbus checks"
    for field in ("key", "signature", "tournament"):
        if not isinstance(doc.get(field), str):
            return f"has no {field}"
    files = doc.get("files")
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        return "has no list of files with their SHA-256"
    bad = [name for name in files if not _PLAIN_NAME.fullmatch(name)]
    if bad:
        return f"names a file outside the run folder: {json.dumps(bad[0])}"
    return ""


def _file_problems(run_dir: Path, files: Mapping[str, str]) -> list[str]:
    problems = []
    for name, digest in files.items():
        path = run_dir / name
        if not path.is_file():
            problems.append(f"signature: {name} is missing (it was signed)")
        elif file_digest(path) != digest:
            problems.append(f"signature: {name} changed since it was signed")
    for name in RUN_FILES:
        if name not in files and (run_dir / name).exists():
            problems.append(f"signature: {name} is not signed")
    return problems
