"""A lane of branch-and-price in a process of its own, so that its Python work (pricing, local search) runs on
a core of its own instead of taking turns for the GIL with the calling process's lane.

On the 64-tier scale benchmark's large groups (2 cores), two thread lanes gain little over one: seed 8's group
took 23.0 s in one lane and 17-19 s in two, at 163 % CPU, while two one-lane searches run side by side as
processes took 14.0 s and 14.2 s, against 13.9 s alone. Figures in benchmarks/RESULTS.md.

The worker is `python -c` on this module, started in a session of its own (a Ctrl-C at the terminal reaches
only the calling process, which stops it); for a large group, as soon as `master.solve_group` starts, so its
imports take the core that the root's column generation leaves idle. It reads requests from stdin and writes
replies to stdout, each a length-prefixed pickle from or to its parent only. It exits when stdin closes.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import traceback
from collections.abc import Callable
from typing import IO, Any

__all__ = ["Worker", "enabled"]

_HEADER = struct.Struct("<Q")
_ENV = "GPU_PLATFORM_PLANNER_PROCESSES"  # "0": branch-and-price's second lane stays a thread


def enabled() -> bool:
    """Whether branch-and-price may start a worker process (off with GPU_PLATFORM_PLANNER_PROCESSES=0, or
    where the interpreter cannot be started again)."""
    return os.environ.get(_ENV, "1") != "0" and bool(sys.executable)


def _send(stream: IO[bytes], message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError("the planner's worker process ended")
    (size,) = _HEADER.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the planner's worker process ended")
    return pickle.loads(data)  # noqa: S301  # written by our own parent or child process, over a pipe


class Worker:
    """A worker process and its pipes, as the calling process sees it."""

    def __init__(self) -> None:
        """Start the process: it imports the planner, then waits for `setup`."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # the modules this process imports
        self.proc = subprocess.Popen(  # noqa: S603  # this interpreter, this module
            [sys.executable, "-c", "from gpu_platform.planner.remote import main; main()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        self.set_up = False

    def setup(self, setup: Any) -> None:
        """Send what the worker's search starts from (once)."""
        _send(self.stdin, setup)
        self.set_up = True

    def ready(self, timeout: float) -> bool:
        """Whether the worker has said it is set up, waiting at most `timeout` seconds (EOFError when it has
        ended)."""
        if not select.select([self.stdout], [], [], timeout)[0]:
            return False
        _receive(self.stdout)
        return True

    def ask(self, request: Any, give_up: Callable[[], bool]) -> Any:
        """Send a request and wait for the reply: EOFError or OSError when the process has ended, or when
        `give_up()` turns true first (checked every 0.05 s; the process is then killed: one stopped from outside
        would never answer). A reply ("error", text) is an exception the worker raised: RuntimeError here."""
        _send(self.stdin, request)
        while not select.select([self.stdout], [], [], 0.05)[0]:
            if give_up():
                self.kill()
                raise EOFError("the planner's worker process did not answer in time")
        reply = _receive(self.stdout)
        if isinstance(reply, tuple) and reply and reply[0] == "error":
            raise RuntimeError(f"branch-and-price's worker process failed:\n{reply[1]}")
        return reply

    def kill(self) -> None:
        """End the process now (safe to call more than once, and from another thread)."""
        with contextlib.suppress(OSError):
            self.proc.kill()

    def close(self) -> None:
        """Let the process end (its stdin closes) and wait for it, briefly."""
        with contextlib.suppress(OSError):
            self.stdin.close()
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.kill()
            self.proc.wait()
        self.stdout.close()


def main() -> None:
    """The worker process: set up a search replica from the first message, then answer batches."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # its parent stops it
    from .branch import serve

    inp, out = sys.stdin.buffer, sys.stdout.buffer
    try:
        setup = _receive(inp)  # the imports above are done by the time the caller needs the worker
    except EOFError:
        return
    handle = serve(setup)
    _send(out, "ready")
    while True:
        try:
            request = _receive(inp)
        except EOFError:
            return
        reply: Any
        try:
            reply = handle(request)
        except Exception:  # handed to the parent, which raises it
            reply = ("error", traceback.format_exc())
        try:
            _send(out, reply)
        except OSError:  # the parent is gone
            return
