"""``skat auth``: a nats-server configuration in which the broker itself hides the cards.

Every player gets its own user that may only
- publish its own commands (``skat.cmd.<player>.>``) and its hello (``skat.hello.<player>``),
- subscribe to its own views (``skat.view.<player>.>``), its own reply inbox
  (``_INBOX.<player>.>``: connect with ``inbox_prefix="_INBOX.<player>"``) and the public feed.
Nothing else: no log subjects (the stream holds every hand), no JetStream API, no other
player's subjects. The services (and operator tools) share one user with full access. Since the
services take a command's seat from its subject, a player cannot act for another seat either.

Passwords are random and written, with the configuration, to files readable by the owner only.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import msgspec

from protocol.subjects import check_token

SERVICE_USER = "skat-services"


class Credentials(msgspec.Struct):
    user: str
    password: str

    def url(self, host: str = "127.0.0.1", port: int = 4222) -> str:
        return f"nats://{self.user}:{self.password}@{host}:{port}"


def player_permissions(player: str) -> dict[str, object]:
    check_token("player", player)
    return {
        "publish": {"allow": [f"skat.cmd.{player}.>", f"skat.hello.{player}"]},
        "subscribe": {"allow": [f"skat.view.{player}.>", f"_INBOX.{player}.>", "skat.public.>"]},
    }


def _conf_value(value: object) -> str:
    """nats-server's configuration format accepts JSON values."""
    return json.dumps(value)


def render_config(
    players: dict[str, str],
    service_password: str,
    store_dir: str,
    port: int = 4222,
    max_file_store: str = "8G",
) -> str:
    """The nats-server configuration text for ``players`` (name -> password)."""
    users = [{"user": SERVICE_USER, "password": service_password}]
    users += [
        {"user": name, "password": password, "permissions": player_permissions(name)}
        for name, password in sorted(players.items())
    ]
    lines = [
        "# Written by `skat auth`: one user per player, limited to its own subjects.",
        "# Players cannot read the log (skat.log.>) nor use JetStream's API ($JS.>).",
        "listen: 127.0.0.1:" + str(port),
        "jetstream {",
        f"  store_dir: {_conf_value(store_dir)}",
        f"  max_file_store: {max_file_store}",
        "}",
        "authorization {",
        f"  users: {_conf_value(users)}",
        "}",
    ]
    return "\n".join(lines) + "\n"


def write_auth(
    out_dir: str | os.PathLike[str],
    players: list[str],
    store_dir: str | None = None,
    port: int = 4222,
) -> dict[str, Credentials]:
    """Write ``nats-server.conf`` and ``credentials.json`` into ``out_dir``; returns the users."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for player in players:
        check_token("player", player)
        if player == SERVICE_USER:
            raise ValueError(f"{SERVICE_USER} is reserved for the services")
    creds = {p: Credentials(p, secrets.token_urlsafe(18)) for p in players}
    service = Credentials(SERVICE_USER, secrets.token_urlsafe(24))
    text = render_config(
        {p: c.password for p, c in creds.items()},
        service.password,
        store_dir or str(out / "jetstream"),
        port,
    )
    _write_private(out / "nats-server.conf", text)
    everyone = {SERVICE_USER: service, **creds}
    _write_private(out / "credentials.json", msgspec.json.format(msgspec.json.encode(everyone)).decode() + "\n")
    return everyone


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def load_credentials(out_dir: str | os.PathLike[str]) -> dict[str, Credentials]:
    """The users ``write_auth`` wrote to ``out_dir/credentials.json``."""
    raw = (Path(out_dir) / "credentials.json").read_bytes()
    return msgspec.json.decode(raw, type=dict[str, Credentials])
