"""A light inter-process message channel over one OS pipe (no feeder thread, one ``write`` per message).

Messages are tiny tuples of numbers sent as JSON (nothing is unpickled; tuples arrive as lists). Each
encoded message is far below ``PIPE_BUF``, so the single write that
:meth:`multiprocessing.connection.Connection.send_bytes` makes is atomic: any number of processes may
:meth:`PipeChannel.put`; exactly one thread may :meth:`PipeChannel.get`.
"""

from __future__ import annotations

import json
import queue
from multiprocessing.context import BaseContext
from typing import Any


class PipeChannel:
    """Many-writer, one-reader channel with the ``put`` / ``get(block, timeout)`` API of :class:`queue.Queue`."""

    def __init__(self, ctx: BaseContext) -> None:
        self._reader, self._writer = ctx.Pipe(duplex=False)

    def put(self, item: Any) -> None:
        """Send ``item`` (JSON-serialisable, well under 4096 bytes encoded; tuples arrive as lists)."""
        self._writer.send_bytes(json.dumps(item, separators=(",", ":")).encode())

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        """Receive the next item; ``queue.Empty`` if none arrives within ``timeout`` (or at once if not ``block``)."""
        wait = (timeout if timeout is not None else None) if block else 0.0
        if not self._reader.poll(wait):
            raise queue.Empty
        return json.loads(self._reader.recv_bytes())

    def close(self) -> None:
        """Close both ends in this process."""
        self._reader.close()
        self._writer.close()
