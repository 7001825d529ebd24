"""A lane of branch-and-price in a process of its own, so that its Python work (pricing, local search) runs on
a core of its own instead of taking turns for the GIL with the calling process's lane.

On the 64-tier scale benchmark's large groups (2 cores), two thread lanes gain little over one: seed 8's group
took 23.0 s in one lane and 17-23 s in two, at 163 % CPU, while two one-lane searches run side by side as
processes took 14.0 s and 14.2 s, against 13.9 s alone. Figures in benchmarks/RESULTS.md.

The worker is this interpreter in isolated mode (`-I`: no current directory, no PYTHON* variables) with the
calling process's `sys.path`, so it imports the same code; it runs in a session of its own, so a Ctrl-C at the
terminal reaches only the calling process, which stops it. Requests and replies go over two pipes of their own
(its stdin, stdout and stderr are /dev/null, so nothing it prints can mix in), each message a magic number, a
length and a pickle from or to its parent only. Its parent kills it once the search is done with it (it holds
nothing that needs a clean exit, and an interpreter's exit took 0.27 s); on its own it ends when its request pipe
closes, or (on Linux) when its parent dies. For a large group it starts as soon as `master.solve_group` starts, so
its imports (about 1 s) take the core that the root's column generation leaves idle.
"""

from __future__ import annotations

import contextlib
import json
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

_HEADER = struct.Struct("<4sQ")  # magic, length
_MAGIC = b"GPPW"
_MOST = 1 << 31  # bytes in one message, at most
_ENV = "GPU_PLATFORM_PLANNER_PROCESSES"  # 0 / false / no / off: branch-and-price's second lane stays a thread
_OFF = {"0", "false", "no", "off"}
# The worker's first lines. On Linux the kernel kills it when its parent dies (PR_SET_PDEATHSIG = 1, SIGKILL = 9):
# a process the parent forked may hold the request pipe open, so that pipe's end alone does not say the parent is
# gone. Set before the planner's imports (about 1 s), which would otherwise leave it without a parent that long;
# a parent already gone by then ends it at once.
_BOOT = """import ctypes, json, os, sys
if sys.platform.startswith("linux"):
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, 9)
    except (OSError, AttributeError):
        pass
if os.getppid() != int(sys.argv[4]):
    os._exit(0)
sys.path[:] = json.loads(sys.argv[3])
from gpu_platform.planner.remote import main
main()
"""
_CHUNK = 4096  # PIPE_BUF on Linux: a write this size never blocks once select says the pipe is writable


def enabled() -> bool:
    """Whether branch-and-price may start a worker process (off with GPU_PLATFORM_PLANNER_PROCESSES=0, false,
    no or off, or where the interpreter cannot be started again)."""
    return os.environ.get(_ENV, "1").strip().lower() not in _OFF and bool(sys.executable)


def _frame(message: Any) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(_MAGIC, len(data)) + data


def _send(stream: IO[bytes], message: Any) -> None:
    stream.write(_frame(message))
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError("the planner's worker process ended")
    magic, size = _HEADER.unpack(head)
    if magic != _MAGIC or size > _MOST:
        raise EOFError("the planner's worker process sent something else than a message")
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the planner's worker process ended")
    return pickle.loads(data)  # noqa: S301  # written by our own parent or child process, over its own pipe


class Worker:
    """A worker process and its pipes, as the calling process sees it."""

    def __init__(self) -> None:
        """Start the process: it imports the planner, then waits for `setup`."""
        paths = [p for p in sys.path if isinstance(p, str)]
        to_worker, from_parent = os.pipe()[::-1]  # (write end, read end)
        from_worker, to_parent = os.pipe()
        try:
            self.proc = subprocess.Popen(  # noqa: S603  # this interpreter, this module
                [
                    sys.executable,
                    "-I",
                    "-c",
                    _BOOT,
                    str(from_parent),
                    str(to_parent),
                    json.dumps(paths),
                    str(os.getpid()),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(from_parent, to_parent),
                start_new_session=True,
            )
        except BaseException:
            for fd in (to_worker, from_parent, from_worker, to_parent):
                os.close(fd)
            raise
        os.close(from_parent)
        os.close(to_parent)
        self.out = to_worker
        self.stdout = os.fdopen(from_worker, "rb")
        self.set_up = False

    def _write(self, data: bytes, give_up: Callable[[], bool]) -> None:
        """Write `data` in pieces that never block, checking `give_up` while the worker does not read."""
        view = memoryview(data)
        while view:
            if not select.select([], [self.out], [], 0.05)[1]:
                if give_up():
                    self.kill()
                    raise EOFError("the planner's worker process did not read in time")
                continue
            view = view[os.write(self.out, view[:_CHUNK]) :]

    def setup(self, setup: Any, give_up: Callable[[], bool]) -> None:
        """Send what the worker's search starts from (once)."""
        self._write(_frame(setup), give_up)
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
        self._write(_frame(request), give_up)
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
        """End the process and wait for it (killed, it ends at once) and close the pipes."""
        if self.out >= 0:
            with contextlib.suppress(OSError):
                os.close(self.out)
            self.out = -1
        self.kill()
        self.proc.wait()
        self.stdout.close()


def main() -> None:
    """The worker process: set up a search replica from the first message, then answer batches."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # its parent stops it
    from .branch import serve

    inp, out = os.fdopen(int(sys.argv[1]), "rb"), os.fdopen(int(sys.argv[2]), "wb")
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
        except Exception:  # handed to the parent, which goes on without this process
            reply = ("error", traceback.format_exc())
        try:
            _send(out, reply)
        except OSError:  # the parent is gone
            return
