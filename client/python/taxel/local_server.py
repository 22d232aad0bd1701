"""A taxel-server subprocess on this machine, for examples, notebooks, tests and benchmarks.

    with taxel.LocalServer("build/server/taxel-server") as server:
        client = taxel.Client(server.target)
        ...

The server listens on 127.0.0.1 at a free port chosen by the kernel (port 0) and reports it on
stderr (`event=server_started ... port=NNNN`); a thread follows that log, so nothing polls or
sleeps. `stop()` sends SIGTERM (the server drains, then exits).
"""
import re
import signal
import subprocess
import threading
from typing import List, Optional, Sequence

__all__ = ["LocalServer"]

_STARTED = re.compile(r"event=server_started .* port=(\d+)")


class LocalServer:
    """A taxel-server subprocess on 127.0.0.1.

    Args:
      binary: path of the taxel-server executable.
      extra_args: more flags ("--auth_tokens_file=...", "--max_scenes=8"); not --log_level above
        info: the port is read from the server's "server_started" log line.
      threads: evaluation threads (--threads; None = the server's default, every core).
      grace_seconds: --shutdown_grace_seconds (SIGTERM waits that long for in-flight calls and
        idle connections).

    `log` keeps the server's stderr lines.
    """

    def __init__(self, binary: str, extra_args: Sequence[str] = (), threads: Optional[int] = None,
                 grace_seconds: float = 0.5):
        self.binary = binary
        self.extra_args = list(extra_args)
        self.threads = threads
        self.grace_seconds = grace_seconds
        self.proc: Optional[subprocess.Popen] = None
        self.port: Optional[int] = None
        self.log: List[str] = []

    def start(self, port: int = 0, timeout: float = 20.0) -> "LocalServer":
        """Starts the server on `port` (0 = any free port) and waits until it listens.
        RuntimeError (with the server's log) when it does not start within `timeout` seconds."""
        started = threading.Event()
        self.log = []
        self.port = None
        args = [self.binary, f"--address=127.0.0.1:{port}", "--metrics_address=",
                f"--shutdown_grace_seconds={self.grace_seconds}"]
        if self.threads is not None:
            args.append(f"--threads={self.threads}")
        self.proc = subprocess.Popen(args + self.extra_args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)

        def follow(stream, log):
            for line in stream:  # until the process closes stderr
                log.append(line)
                m = _STARTED.search(line)
                if m and self.port is None:
                    self.port = int(m.group(1))
                    started.set()
            started.set()  # exited without starting: wake the waiter

        threading.Thread(target=follow, args=(self.proc.stderr, self.log), daemon=True).start()
        if not started.wait(timeout) or self.port is None or (port and self.port != port):
            running = self.proc.poll() is None
            self.stop()
            hint = (" (still running without reporting its port: keep --log_level at info or debug, the port "
                    "is read from the server_started event)") if running else ""
            raise RuntimeError(f"taxel-server ({self.binary}) did not start{hint}:\n" + "".join(self.log))
        return self

    @property
    def target(self) -> str:
        """"127.0.0.1:PORT", for taxel.Client."""
        return f"127.0.0.1:{self.port}"

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM and wait for the exit (SIGKILL after `timeout` seconds)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def __enter__(self) -> "LocalServer":
        return self if self.proc is not None else self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self):
        state = f"port {self.port}" if self.proc is not None else "stopped"
        return f"LocalServer({self.binary!r}, {state})"
