"""A real two-node Ray cluster on loopback for the executor tests, started and torn down by the tests.

``ray start --head`` plus a second ``ray start --address`` node, each with one CPU, a small object
store, no dashboard and no usage stats, in a temporary directory. Every process of the cluster
carries ``EVALTK_RAY_TEST_TAG=<uuid>`` in its environment (the daemons and the workers they spawn
inherit it), so teardown kills exactly these processes by pid — never ``ray stop``, which stops
every Ray cluster of the user on the machine.

From :meth:`LocalCluster.start` until the whole cluster is killed, this process's environment (inherited by
the nodes, their workers and every process the test starts) carries :meth:`LocalCluster.exported_env`:

* ``RAY_AUTH_MODE=disabled`` (:data:`AUTH_ENV`): the cluster and its drivers run without token
  authentication. Ray 2.60's one-node ``ray.init()`` leaves a token in ``~/.ray/auth_token``, after which a
  ``ray start`` that does not say otherwise turns token authentication on, and the second node fails to join
  the head (``InvalidAuthToken``);
* ``PYTHONPATH`` with this checkout first, so Ray workers and ``python -m evaltk`` subprocesses import the
  code under test (and its compiled ``gpu_env``), not an installed copy.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from evaltk.envs.shm_reaper import tagged_pids

TAG_VAR = "EVALTK_RAY_TEST_TAG"
NODE_VAR = "EVALTK_RAY_TEST_NODE"
RAY = str(Path(sys.executable).with_name("ray"))
ROOT = Path(__file__).resolve().parents[3]
OBJECT_STORE_BYTES = 100_000_000  # 100 MB per node: units return a few rows
START_ATTEMPTS = 3
AUTH_ENV = {"RAY_AUTH_MODE": "disabled"}
"""Loopback test clusters run without token authentication (see the module docstring)."""


def free_port() -> int:
    """Return a TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LocalCluster:
    """A head node and a second node on 127.0.0.1, one CPU and ``vizdoom_engine`` slots each."""

    tmp: Path
    tag: str = field(default_factory=lambda: uuid.uuid4().hex)
    port: int = field(default_factory=free_port)
    engines: int = 1
    log: list[str] = field(default_factory=list)
    saved_env: dict[str, str | None] = field(default_factory=dict)  # this process's values of exported_env's names

    @property
    def address(self) -> str:
        """The head's GCS address, HOST:PORT."""
        return f"127.0.0.1:{self.port}"

    @staticmethod
    def exported_env() -> dict[str, str]:
        """Return the variables the cluster's processes and its drivers share: :data:`AUTH_ENV` and ``PYTHONPATH``."""
        path = os.environ.get("PYTHONPATH", "")
        if str(ROOT) not in path.split(os.pathsep):
            path = os.pathsep.join(p for p in (str(ROOT), path) if p)
        return {**AUTH_ENV, "PYTHONPATH": path}

    def env(self, node: str) -> dict[str, str]:
        """Environment of a ``ray start`` of ``node`` (tagged; fast node-death detection)."""
        return dict(os.environ, **self.exported_env(),
                    **{TAG_VAR: self.tag, NODE_VAR: f"{self.tag}-{node}", "RAY_USAGE_STATS_ENABLED": "0",
                       "RAY_health_check_period_ms": "1000", "RAY_health_check_failure_threshold": "3",
                       "RAY_health_check_initial_delay_ms": "1000",
                       # a loaded CI machine: give the raylet more than Ray's 45 s to register
                       "RAY_raylet_start_wait_time_s": "180"})

    def _ray_start(self, node: str, *args: str) -> None:
        common = ["--num-cpus", "1", "--resources", f'{{"vizdoom_engine": {self.engines}}}',
                  "--object-store-memory", str(OBJECT_STORE_BYTES), "--node-ip-address", "127.0.0.1",
                  "--disable-usage-stats",
                  # fixed agent ports: with port 0 the raylet waits a fixed time for the agents to write
                  # theirs to a file, and gives up (a crashed node) when a loaded machine starts them slowly
                  "--dashboard-agent-grpc-port", str(free_port()), "--dashboard-agent-listen-port", str(free_port()),
                  "--runtime-env-agent-port", str(free_port()), "--metrics-export-port", str(free_port())]
        # Ray's raylet gives its agents a fixed time to report their ports and exits when a loaded machine
        # starts them more slowly (ray-project/ray#65983): kill what that attempt left and start it again.
        for attempt in range(1, START_ATTEMPTS + 1):
            try:
                proc = subprocess.run([RAY, "start", *args, *common], env=self.env(node), capture_output=True,
                                      text=True, timeout=180, cwd=self.tmp)
            except subprocess.TimeoutExpired as exc:
                self.log.append(f"ray start {node} attempt {attempt}: timed out ({exc.stdout!r} {exc.stderr!r})")
            else:
                self.log.append(proc.stdout + proc.stderr)
                if proc.returncode == 0:
                    return
            self.kill(node)
        raise RuntimeError(f"ray start {node} failed {START_ATTEMPTS} times:\n" + "\n".join(self.log[-START_ATTEMPTS:]))

    def start(self, *, connect: bool = False) -> LocalCluster:
        """Start the head and the second node; with ``connect``, make this process the cluster's driver first.

        Sets :meth:`exported_env` in this process's environment (restored by :meth:`kill` of the whole cluster).
        """
        exported = self.exported_env()
        if not self.saved_env:
            self.saved_env = {name: os.environ.get(name) for name in exported}
        os.environ.update(exported)
        self._ray_start("head", "--head", "--port", str(self.port), "--include-dashboard", "false",
                        "--temp-dir", str(self.tmp / "ray"), "--ray-client-server-port", str(free_port()))
        if connect:
            import ray

            ray.init(address=self.address, logging_level=logging.ERROR, log_to_driver=False)
        self.start_second()
        return self

    def start_second(self) -> None:
        """Start (or restart) the second node and wait until the cluster has two alive nodes."""
        self._ray_start("second", "--address", self.address)
        self.wait_nodes(2)

    def alive_nodes(self) -> int:
        """Count the alive nodes (asked by this process if it is a driver, else by a short-lived Python process)."""
        import ray

        if ray.is_initialized():
            nodes: list[dict[str, object]] = ray.nodes()  # type: ignore[no-untyped-call]
            return len([n for n in nodes if n["Alive"]])
        code = (f"import ray,logging;ray.init(address={self.address!r},logging_level=logging.ERROR,"
                "log_to_driver=False);print(sum(1 for n in ray.nodes() if n['Alive']))")
        proc = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, RAY_USAGE_STATS_ENABLED="0"),
                              capture_output=True, text=True, timeout=120)
        return int(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else -1

    def wait_nodes(self, count: int, timeout_s: float = 60.0) -> None:
        """Wait until ``count`` nodes are alive."""
        deadline = time.monotonic() + timeout_s
        while (alive := self.alive_nodes()) != count:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the cluster has {alive} alive nodes after {timeout_s} s, expected {count}")
            time.sleep(0.5)

    def pids(self, node: str | None = None) -> list[int]:
        """PIDs of the cluster's processes (of one node: ``head`` or ``second``)."""
        if node is None:
            return [p for p in tagged_pids(TAG_VAR, self.tag) if p != os.getpid()]
        return [p for p in tagged_pids(NODE_VAR, f"{self.tag}-{node}") if p != os.getpid()]

    def kill(self, node: str | None = None) -> list[int]:
        """SIGKILL every process of ``node`` (all nodes if None) until none is left; return the pids killed.

        Killing all nodes also gives this process's environment back its values of :meth:`exported_env`'s names.
        """
        killed: list[int] = []
        deadline = time.monotonic() + 30
        while (left := self.pids(node)) and time.monotonic() < deadline:
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            time.sleep(0.1)
        if node is None:
            self._restore_env()
        return killed

    def _restore_env(self) -> None:
        for name, value in self.saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self.saved_env = {}
