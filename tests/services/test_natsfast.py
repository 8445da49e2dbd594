"""Our header parser must give exactly what nats-py's own parser gives."""

from __future__ import annotations

import pytest

from services import natsfast
from services.store import ack_metadata, parse_time

SAMPLES = [
    b"Nats-Msg-Id: t:3\r\nNats-Expected-Last-Subject-Sequence: 0\r\n\r\n",
    b"Nats-Stream: SKAT\r\nNats-Subject: skat.log.t.bid\r\nNats-Sequence: 12\r\nNats-Time-Stamp: 2026-11-30T12:41:23.621294Z\r\n\r\n",
    b"Name:Value\r\nName2:\tValue2\r\nBad Name: x\r\n no-colon\r\nK: caf\xc3\xa9\r\nK\xff: y\r\n\r\n",
    b"",
]


@pytest.mark.parametrize("raw", SAMPLES)
def test_same_headers_as_nats_py(raw: bytes) -> None:
    original = natsfast.original()
    assert natsfast.parse_header_lines(raw) == original(raw)  # type: ignore[operator]


def test_time_stamps_and_ack_subjects() -> None:
    assert parse_time("1970-01-01T00:00:01.5Z") == pytest.approx(1.5)
    assert parse_time("2026-11-30T12:41:23.621294123Z") == pytest.approx(1796042483.621294123)
    assert ack_metadata("$JS.ACK.SKAT.x.1.17.3.1796042580941522884.0") == (17, pytest.approx(1796042580.941522884))
    v2 = "$JS.ACK.hub.ACCHASH.SKAT.x.1.17.3.1796042580941522884.0.tok"
    assert ack_metadata(v2) == (17, pytest.approx(1796042580.941522884))


def test_importing_the_packages_patches_nothing() -> None:
    """No side effects on import: nats-py is only changed when a service starts."""
    import subprocess
    import sys

    code = (
        "import nats.aio.client as c; before = c.Client._parse_header_lines\n"
        "import pkgutil, importlib, protocol, services, skatbus\n"
        "for pkg in (protocol, services, skatbus):\n"
        "    for m in pkgutil.iter_modules(pkg.__path__):\n"
        "        if m.name != '__main__': importlib.import_module(pkg.__name__ + '.' + m.name)\n"
        "assert c.Client._parse_header_lines is before, 'patched on import'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
