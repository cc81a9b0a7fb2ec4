"""A process that starts a fake ViZDoom game through ``shm_reaper.init_game``: an owner the tests steer.

Its game's ``init()`` creates ``/dev/shm/<name>`` (not mapped, as a real game's file is between its creation and
its mapping), prints ``made`` and waits for a line on stdin; then it maps the file (as a real game's controller
does), returns, and the process prints ``inited`` and waits for another line before it exits. A test SIGKILLs it
inside ``init()`` to be a game killed before its names were known, or lets it finish to be a live game.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_CODE = """
import mmap, os, sys
from evaltk.envs import shm_reaper

class Game:
    def init(self):
        path = "/dev/shm/" + sys.argv[1]
        with open(path, "wb") as fh:
            fh.write(bytes(4096))
        print("made", flush=True)
        sys.stdin.readline()
        fd = os.open(path, os.O_RDWR)
        self.view = mmap.mmap(fd, 4096)
        os.close(fd)

game = Game()
shm_reaper.init_game(game)
print("inited", flush=True)
sys.stdin.readline()
"""


class FakeOwner:
    """A running fake owner (see the module docstring) whose game file is ``/dev/shm/<name>``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.path = Path("/dev/shm", name)
        self.proc = subprocess.Popen([sys.executable, "-c", _CODE, name], cwd=ROOT, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.expect("made")

    def expect(self, word: str) -> None:
        """Wait for the line ``word`` from the process (it is written when the step is done)."""
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        assert line == word, f"fake owner {self.proc.pid}: expected {word!r}, got {line!r} (exit {self.proc.poll()})"

    def go(self) -> None:
        """Let the process take its next step."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        """SIGKILL the process and reap it."""
        self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
