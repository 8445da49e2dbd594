"""``skat auth``: a nats-server configuration in which the broker itself hides the cards.

Every player gets its own NKey user that may only
- publish its own commands (``skat.cmd.<player>.>``) and its hello (``skat.hello.<player>``),
  and ask whether a tournament has ended (``protocol.subjects.TOURNAMENT_END_REQUESTS``: one
  direct get of the last announcement on ``skat.public.tournament.<id>`` in stream ``SKATEND``,
  which holds nothing but those public announcements),
- subscribe to its own views (``skat.view.<player>.>``), its own reply inbox
  (``_INBOX.<player>.>``: connect with ``inbox_prefix="_INBOX.<player>"``) and the public feed.
Nothing else: no log subjects (the stream holds every hand), no other JetStream API, no other
player's subjects. The services (and operator tools) share one user with full access. Since the
services take a command's seat from its subject, a player cannot act for another seat either.

The server configuration holds public keys only; each user's seed (its private key) is written
to its own file, readable by the owner only: ``DIR/<player>.nk`` for a player,
``DIR/skat-services.nk`` for the services. An NKey login never sends the key, only a
signature of the server's random nonce, so neither a log nor a man in the middle learns it.

Accounts: the services (with JetStream) are in account ``SKAT``, each player alone in its own
account ``P_<player>`` with its own caps (connections, subscriptions and payload per
connection: what nats-server offers in a static configuration, where no user can have caps of
its own). So a player flooding connections or subscriptions uses up only its own allowance,
never another player's nor the services'. The accounts share exactly each player's subjects, by
stream exports and imports that keep each message's reply subject: ``P_<player>`` exports
``skat.cmd.<player>.>`` and ``skat.hello.<player>`` to ``SKAT`` only; ``SKAT`` exports to that
account only ``skat.view.<player>.>`` and ``_INBOX.<player>.>`` (the services' replies), and
``skat.public.>`` to every player account, and that one direct get as a service. Another
player's subjects do not exist in a player's account at all; its user's permissions apply
inside it as well.

``DIR/skat-auth.json`` (no secrets) tells the tools where everything is: the listen address,
whether TLS is on and the CA file, each user's seed file and each player's account
(``load_auth``; a directory from before per-player accounts still loads, with a warning to run
``skat auth`` again, which keeps every key).
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from protocol.subjects import TOURNAMENT_END_REQUESTS, check_token

from .certs import check_given, ensure_ca, issue_server_cert, write_private
from .connection import ConnectionSettings, read_credentials

SERVICE_USER = "skat-services"
SERVICES_ACCOUNT = "SKAT"
PLAYER_ACCOUNT_PREFIX = "P_"
PUBLIC_FEED = "skat.public.>"
META_FILE = "skat-auth.json"
CONFIG_FILE = "nats-server.conf"
DEFAULT_LISTEN = ("127.0.0.1", 4222)
MAX_PAYLOAD = 64 * 1024
"""Server-wide message size cap: an event or a prompt is a few KiB at most."""
PLAYER_CONNECTIONS = 4
"""Connections of one player at a time, in its own account (a bot, a restart overlapping its
predecessor, a spare)."""
PLAYER_SUBSCRIPTIONS = 100
"""Subscriptions per player connection: views, reply inbox and public feeds of a few tables."""
PLAYER_MAX_PAYLOAD = 8 * 1024
"""What a player's connection may publish: commands and hellos are well under 1 KiB."""
WILDCARD_HOSTS = ("0.0.0.0", "::", "")


class AuthError(ValueError):
    """A ``skat auth`` input or directory that cannot be used (one line for the command line)."""


def player_permissions(player: str) -> dict[str, object]:
    check_token("player", player)
    return {
        "publish": {"allow": [f"skat.cmd.{player}.>", f"skat.hello.{player}", TOURNAMENT_END_REQUESTS]},
        "subscribe": {"allow": [f"skat.view.{player}.>", f"_INBOX.{player}.>", PUBLIC_FEED]},
    }


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT``) -> (host, port)."""
    match = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d{1,5})|([A-Za-z0-9.\-]*):(\d{1,5})", text.strip())
    if not match:
        raise AuthError(f"--listen wants HOST:PORT (e.g. 0.0.0.0:4222 or [::]:4222), not {text!r}")
    host = match.group(1) if match.group(1) is not None else match.group(3)
    port = int(match.group(2) or match.group(4))
    if not 0 < port < 65536:
        raise AuthError(f"--listen: port {port} is not in 1..65535")
    return host or "0.0.0.0", port


def format_listen(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def new_seed() -> bytes:
    """A fresh NKey user seed (``SU...``)."""
    import nkeys

    return bytes(nkeys.encode_seed(secrets.token_bytes(32), nkeys.PREFIX_BYTE_USER))


def public_key(seed: bytes) -> str:
    import nkeys

    pair = nkeys.from_seed(bytearray(seed))
    key = bytes(pair.public_key).decode()
    pair.wipe()
    return key


def _conf_value(value: object) -> str:
    """nats-server's configuration format accepts JSON values."""
    return json.dumps(value)


def _indented(value: object, depth: int = 1) -> str:
    """A JSON value laid out for a reader: maps one key a line, lists one compact item a line
    (a user, an export), nested ``depth`` levels deep in the ``accounts`` block."""
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(value, dict):
        body = "".join(f"{inner}{key}: {_indented(item, depth + 1)}\n" for key, item in value.items())
        return "{\n" + body + pad + "}"
    if isinstance(value, list) and value and not all(isinstance(item, str) for item in value):
        body = "".join(f"{inner}{json.dumps(item)}\n" for item in value)
        return "[\n" + body + pad + "]"
    return json.dumps(value)


@dataclass(frozen=True)
class TLSFiles:
    """The server side of TLS: what goes into the configuration's ``tls {}`` block."""

    cert_file: str
    key_file: str


@dataclass(frozen=True)
class PlayerLimits:
    connections_per_player: int = PLAYER_CONNECTIONS
    subscriptions: int = PLAYER_SUBSCRIPTIONS
    max_payload: int = PLAYER_MAX_PAYLOAD


def player_account(player: str) -> str:
    """The account of ``player``'s user: ``P_<player>`` (a player id is a subject token, so the
    name is one too, and the prefix keeps it clear of ``SKAT`` and nats-server's ``$G``/``$SYS``)."""
    return f"{PLAYER_ACCOUNT_PREFIX}{check_token('player', player)}"


def render_config(
    players: dict[str, str],
    service_key: str,
    store_dir: str,
    listen: tuple[str, int] = DEFAULT_LISTEN,
    tls: TLSFiles | None = None,
    limits: PlayerLimits = PlayerLimits(),
    max_file_store: str = "8G",
) -> str:
    """The nats-server configuration text for ``players`` (name -> public NKey): the services'
    account and one account per player, joined only by the player's own subjects."""
    names = sorted(players)
    accounts = {name: player_account(name) for name in names}
    exports: list[object] = []
    imports: list[object] = []
    player_blocks: dict[str, dict[str, object]] = {}
    if names:  # an export naming no account would be public: with no players there is none
        exports.append({"stream": PUBLIC_FEED, "accounts": [accounts[n] for n in names]})
        # Has a tournament ended? One direct get of its last announcement (public anyway).
        exports.append({"service": TOURNAMENT_END_REQUESTS, "accounts": [accounts[n] for n in names]})
    for name in names:
        account = accounts[name]
        to_player = [f"skat.view.{name}.>", f"_INBOX.{name}.>"]
        to_services = [f"skat.cmd.{name}.>", f"skat.hello.{name}"]
        exports += [{"stream": s, "accounts": [account]} for s in to_player]
        imports += [{"stream": {"account": account, "subject": s}} for s in to_services]
        player_blocks[account] = {
            "users": [{"nkey": players[name], "permissions": player_permissions(name)}],
            "exports": [{"stream": s, "accounts": [SERVICES_ACCOUNT]} for s in to_services],
            "imports": [
                *({"stream": {"account": SERVICES_ACCOUNT, "subject": s}} for s in [*to_player, PUBLIC_FEED]),
                {"service": {"account": SERVICES_ACCOUNT, "subject": TOURNAMENT_END_REQUESTS}},
            ],
            "limits": {
                "max_connections": max(1, limits.connections_per_player),
                "max_subscriptions": limits.subscriptions,
                "max_payload": limits.max_payload,
            },
        }
    services = {"jetstream": "enabled", "users": [{"nkey": service_key}], "exports": exports, "imports": imports}
    lines = [
        "# Written by `skat auth`: one NKey user per player, each in its own account, limited to",
        "# its own subjects. Players cannot read the log (skat.log.>) nor use JetStream's API ($JS.>).",
        "# Public keys only: the seeds are in the <user>.nk files next to this one.",
        f"listen: {_conf_value(format_listen(*listen))}",
        f"max_payload: {MAX_PAYLOAD}",
        "jetstream {",
        f"  store_dir: {_conf_value(store_dir)}",
        f"  max_file_store: {max_file_store}",
        "}",
    ]
    if tls is not None:
        lines += [
            "# TLS only: a plaintext client is refused before it can send anything.",
            "tls {",
            f"  cert_file: {_conf_value(tls.cert_file)}",
            f"  key_file: {_conf_value(tls.key_file)}",
            "  timeout: 2",
            "}",
        ]
    lines += [
        "accounts {",
        "  # The services, with JetStream. Exports: what each player's account receives (its views",
        "  # and reply inbox to it alone, the public feed to all); imports: what each one sends.",
        f"  {SERVICES_ACCOUNT}: {_indented(services)}",
    ]
    if player_blocks:
        lines += [
            "  # One account per player: its permissions, and caps of its own (connections;",
            "  # subscriptions and publish size per connection) that no other player can exhaust.",
        ]
    lines += [f"  {_conf_value(account)}: {_indented(block)}" for account, block in player_blocks.items()]
    lines.append("}")
    return "\n".join(lines) + "\n"


@dataclass
class AuthDir:
    """What ``skat auth`` wrote into a directory (read from ``skat-auth.json``)."""

    path: Path
    host: str
    port: int
    tls: bool
    ca_file: str | None
    store_dir: str | None = None
    seed_files: dict[str, str] = field(default_factory=dict)
    """user (players and ``skat-services``) -> seed file."""
    warnings: list[str] = field(default_factory=list)
    """What ``write_auth`` or ``load_auth`` wants the operator to know (not stored)."""

    @property
    def config(self) -> str:
        return str(self.path / CONFIG_FILE)

    @property
    def players(self) -> list[str]:
        return sorted(u for u in self.seed_files if u != SERVICE_USER)

    @property
    def listen(self) -> str:
        return format_listen(self.host, self.port)

    def url(self, host: str | None = None, port: int | None = None) -> str:
        """The server URL to connect to (``tls://`` when TLS is on); a wildcard listen address
        means loopback."""
        host = host or ("127.0.0.1" if self.host in WILDCARD_HOSTS else self.host)
        shown = f"[{host}]" if ":" in host else host
        return f"{'tls' if self.tls else 'nats'}://{shown}:{port or self.port}"

    def seed_file(self, user: str) -> str:
        try:
            return self.seed_files[user]
        except KeyError:
            raise AuthError(f"{self.path}: no user {user!r} (users: {', '.join(sorted(self.seed_files))})") from None

    def settings(self, user: str = SERVICE_USER, url: str | None = None) -> ConnectionSettings:
        """How ``user`` connects: the URL, its seed file and, with TLS, the CA file."""
        creds = read_credentials(self.seed_file(user))
        return ConnectionSettings((url or self.url(),), creds, self.ca_file if self.tls else None)


def _resolve(base: Path, name: str | None) -> str | None:
    if not name:
        return None
    p = Path(name)
    return str(p if p.is_absolute() else base / p)


def load_auth(out_dir: str | os.PathLike[str]) -> AuthDir:
    """The users, listen address and TLS files ``write_auth`` recorded in ``out_dir``."""
    base = Path(out_dir).resolve()
    meta_path = base / META_FILE
    try:
        meta = json.loads(meta_path.read_text())
    except FileNotFoundError:
        old = (
            " (it holds an old credentials.json: run skat auth again for NKeys)"
            if (base / "credentials.json").exists()
            else ""
        )
        raise AuthError(f"{base}: no {META_FILE}; write it with skat auth --out {out_dir}{old}") from None
    except (OSError, ValueError) as exc:
        raise AuthError(f"{meta_path}: cannot read it ({exc.__class__.__name__})") from None
    try:
        host, port = parse_listen(meta["listen"])
        seeds = {SERVICE_USER: meta["services"], **meta["players"]}
        written = AuthDir(
            path=base,
            host=host,
            port=port,
            tls=bool(meta.get("tls")),
            ca_file=_resolve(base, meta.get("ca_file")),
            store_dir=_resolve(base, meta.get("store_dir")),
            seed_files={user: str(_resolve(base, name)) for user, name in seeds.items()},
        )
    except (KeyError, TypeError, AttributeError):
        raise AuthError(f"{meta_path}: not written by this version of skat auth") from None
    if "player_accounts" not in meta:  # before one account per player: it still works as it did
        written.warnings.append(
            f"{base} puts all players in one account, so one player can use up the others' connections: "
            f"run skat auth again with the same options (--out {out_dir}; the keys are kept), then reload or restart the server"
        )
    return written


def _seed_for(path: Path, rotate: bool) -> bytes:
    """The seed in ``path`` if there is a valid one (re-running ``skat auth`` to add a player
    keeps everybody else's key), else a new one written there."""
    if not rotate and path.exists():
        try:
            creds = read_credentials(path)
            if creds.kind == "nkey" and "nkeys_seed" in creds.options:
                seed = path.read_bytes().strip()
                os.chmod(path, 0o600)
                return seed
        except (ValueError, OSError):
            pass
    seed = new_seed()
    write_private(path, seed + b"\n")
    return seed


def _unwritable(out_dir: str | os.PathLike[str], exc: OSError) -> str:
    """One line for a directory ``skat auth`` cannot write: which path, and the system's reason."""
    out = os.fspath(out_dir)
    reason = (exc.strerror or exc.__class__.__name__).lower()
    if isinstance(exc, FileExistsError) and os.path.islink(out):
        reason = f"it is a link to {os.readlink(out)}, which is not there"
    filename = os.fsdecode(exc.filename) if exc.filename is not None else out
    where = "there" if filename == out else filename
    return f"--out {out}: cannot write {where}: {reason}"


def write_auth(
    out_dir: str | os.PathLike[str],
    players: Iterable[str],
    store_dir: str | None = None,
    port: int | None = None,
    listen: tuple[str, int] | None = None,
    tls: bool = False,
    tls_cert: str | None = None,
    tls_key: str | None = None,
    tls_ca: str | None = None,
    tls_names: Iterable[str] = (),
    limits: PlayerLimits = PlayerLimits(),
    rotate: bool = False,
) -> AuthDir:
    """Write ``nats-server.conf``, one seed file per user and ``skat-auth.json`` into
    ``out_dir``; returns what was written (``load_auth`` reads it back).

    TLS: ``tls=True`` makes a CA (kept if there is one) and a server certificate for the listen
    host, ``tls_names`` and localhost; or ``tls_cert``/``tls_key`` (and the ``tls_ca`` clients
    need, unless a public CA signed it) are used as given."""
    names = list(players)
    for player in names:
        check_token("player", player)
        if player == SERVICE_USER:
            raise AuthError(f"{SERVICE_USER} is reserved for the services")
    if len(set(names)) != len(names):
        raise AuthError("a player is named twice")
    if listen is not None and port is not None:
        raise AuthError("give --listen HOST:PORT or --port, not both")
    host, port = listen or (DEFAULT_LISTEN[0], port or DEFAULT_LISTEN[1])
    if (tls_cert is None) != (tls_key is None):
        raise AuthError("--tls-cert and --tls-key go together")
    if tls and tls_cert:
        raise AuthError("--tls makes the certificates; --tls-cert/--tls-key bring your own: one or the other")
    if tls_ca and not tls_cert:
        raise AuthError("--tls-ca goes with --tls-cert/--tls-key (with --tls, skat auth writes the CA)")
    warnings: list[str] = []
    if tls_cert and tls_key:
        warnings = check_given(tls_cert, tls_key, tls_ca)

    try:
        out = Path(out_dir)
        if not out.exists():
            out.mkdir(parents=True)
            os.chmod(out, 0o700)  # a directory of keys; an existing one keeps its mode
        base = out.resolve()
        keys: dict[str, str] = {}
        files: dict[str, str] = {}
        for user in [SERVICE_USER, *names]:
            files[user] = f"{user}.nk"
            keys[user] = public_key(_seed_for(base / files[user], rotate))

        server_tls: TLSFiles | None = None
        ca_file: str | None = None
        if tls:
            ca_cert, ca_key = ensure_ca(base / "ca.pem", base / "ca-key.pem")
            issue_server_cert(ca_cert, ca_key, [host, *tls_names], base / "server-cert.pem", base / "server-key.pem")
            server_tls = TLSFiles(str(base / "server-cert.pem"), str(base / "server-key.pem"))
            ca_file = "ca.pem"
        elif tls_cert and tls_key:
            server_tls = TLSFiles(os.path.abspath(tls_cert), os.path.abspath(tls_key))
            ca_file = os.path.abspath(tls_ca) if tls_ca else None

        store = os.path.abspath(store_dir) if store_dir else str(base / "jetstream")
        text = render_config(
            {p: keys[p] for p in names},
            keys[SERVICE_USER],
            store,
            (host, port),
            server_tls,
            limits,
        )
        write_private(base / CONFIG_FILE, text.encode())
        meta = {
            "listen": format_listen(host, port),
            "tls": server_tls is not None,
            "ca_file": ca_file,
            "store_dir": store,
            "services": files[SERVICE_USER],
            "players": {p: files[p] for p in names},
            "player_accounts": {p: player_account(p) for p in names},
            "public_keys": keys,
        }
        (base / META_FILE).write_text(json.dumps(meta, indent=2) + "\n")
        stale = base / "credentials.json"  # passwords from an older skat auth: no longer valid, remove
        if stale.exists():
            stale.unlink()
    except OSError as exc:  # a file in the way, a read-only disk, a name too long, ...
        raise AuthError(_unwritable(out_dir, exc)) from None

    written = load_auth(base)
    written.warnings = warnings
    return written
