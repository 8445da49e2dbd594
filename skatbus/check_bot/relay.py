"""The relay between a bot and the server, which check-bot can cut to see the bot reconnect."""

from __future__ import annotations

import asyncio
import contextlib
import time

# --- the relay ---------------------------------------------------------------------------------


class Relay:
    """A TCP relay on 127.0.0.1 to the server: the bot connects through it, so check-bot can cut
    the bot's connection (and refuse new ones for a while) with the server and services up."""

    def __init__(self, upstream: tuple[str, int], port: int) -> None:
        self.upstream = upstream
        self.port = port
        self.server: asyncio.Server | None = None
        self.links: set[asyncio.StreamWriter] = set()
        self.connections: list[float] = []
        """When each connection came in."""

    async def open(self) -> None:
        if self.server is None:
            self.server = await asyncio.start_server(self._link, "127.0.0.1", self.port)

    async def _link(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections.append(time.time())
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.transport.abort()
            return
        self.links |= {writer, up_writer}
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.transport.abort()
            self.links.discard(writer)

    async def cut(self) -> None:
        """Refuse new connections and reset the open ones."""
        server, self.server = self.server, None
        if server is not None:
            server.close()
        for writer in list(self.links):
            writer.transport.abort()
        self.links.clear()
        if server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2.0)
