"""`synth --out DIR` is atomic, never deletes what it did not write (unless --force), never writes outside DIR."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import DEV_STACK, ROOT
from gpu_platform.cli import main
from gpu_platform.synth import MANIFEST, write_artifacts

BIG = ROOT / "examples" / "aws-1000-a100.yaml"


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def runner():
    return CliRunner()


def test_symlinked_out_keeps_files_it_did_not_write(runner, tmp_path):
    real = tmp_path / "real"
    (real / "kubernetes").mkdir(parents=True)
    (real / "kubernetes" / "my-app.yaml").write_text("mine")
    link = tmp_path / "link"
    link.symlink_to(real)
    result = runner.invoke(main, ["synth", str(DEV_STACK), "--out", str(link)])
    assert result.exit_code == 1 and "my-app.yaml" in result.stderr
    assert (real / "kubernetes" / "my-app.yaml").read_text() == "mine"


def test_symlinked_out_is_rendered_through_the_link(runner, tmp_path):
    real, link = tmp_path / "real", tmp_path / "link"
    real.mkdir()
    link.symlink_to(real)
    assert runner.invoke(main, ["synth", str(DEV_STACK), "--out", str(link)]).exit_code == 0
    assert link.is_symlink() and (real / MANIFEST).exists() and (real / "nodepools").is_dir()


def test_a_failed_write_leaves_the_earlier_render_whole(runner, tmp_path, monkeypatch):
    out = tmp_path / "out"
    assert runner.invoke(main, ["synth", str(DEV_STACK), "--out", str(out)]).exit_code == 0
    before = _tree(out)
    calls = {"n": 0}
    real_write = Path.write_text

    def failing(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 5:
            raise PermissionError(13, "Permission denied", str(self))
        return real_write(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", failing)
    result = runner.invoke(main, ["synth", str(DEV_STACK), "--out", str(out)])
    monkeypatch.undo()
    assert result.exit_code == 1 and "Permission denied" in result.stderr
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging left behind


@pytest.mark.parametrize("delay", [0.15, 0.35, 0.6])
def test_kill_9_mid_synth_leaves_the_earlier_render_whole(tmp_path, delay):
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "gpu_platform.cli", "synth", str(BIG), "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "components")}
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    before = _tree(out)
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpu_platform.cli", "synth", str(DEV_STACK), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    after = _tree(out)
    assert after == before or set(after) == set(_expected_dev(tmp_path)), "a half-written render"
    assert runner_ok(out)


def _expected_dev(tmp_path: Path) -> dict[str, bytes]:
    ref = tmp_path / "ref"
    CliRunner().invoke(main, ["synth", str(DEV_STACK), "--out", str(ref)])
    return _tree(ref)


def runner_ok(out: Path) -> bool:
    """The next synth into the same directory works (a stale staging directory is cleaned up)."""
    result = CliRunner().invoke(main, ["synth", str(DEV_STACK), "--out", str(out)])
    return result.exit_code == 0 and not list(out.parent.glob(".gpu-platform-synth-*"))


def test_out_that_is_a_file_is_refused(runner, tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    result = runner.invoke(main, ["synth", str(DEV_STACK), "--out", str(target)])
    assert result.exit_code != 0 and target.read_text() == "x"


def test_force_replaces_a_directory_of_foreign_files(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("x")
    from gpu_platform.artifacts import Artifact

    counts = write_artifacts([Artifact("helm", "a", ({"name": "a"},))], out, force=True)
    assert counts["helm"] == 1 and not (out / "notes.txt").exists()


@pytest.mark.parametrize("target", ["/", "HOME", "CWD", "PARENT"])
def test_force_never_replaces_root_home_or_the_working_directory(runner, tmp_path, monkeypatch, target):
    work = tmp_path / "project" / "sub"
    work.mkdir(parents=True)
    (work / "keep.txt").write_text("x")
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(tmp_path / "project"))
    out = {"/": "/", "HOME": str(tmp_path / "project"), "CWD": ".", "PARENT": ".."}[target]
    result = runner.invoke(main, ["synth", str(DEV_STACK), "--out", out, "--force"])
    assert result.exit_code == 1 and "even with --force" in result.stderr, result.output
    assert (work / "keep.txt").read_text() == "x"
    assert not list(tmp_path.glob("**/.gpu-platform-synth-*"))


def test_what_a_kill_leaves_next_to_out_is_cleaned_up_and_nothing_else(runner, tmp_path):
    out = tmp_path / "out"
    assert runner.invoke(main, ["synth", str(DEV_STACK), "--out", str(out)]).exit_code == 0
    discarded = tmp_path / ".gpu-platform-synth-out-k1ll3d.discarded"  # killed while removing the earlier render
    (discarded / "queues").mkdir(parents=True)
    (discarded / "queues" / "a.yaml").write_text("x")
    empty = tmp_path / ".gpu-platform-synth-out-3mpty"  # killed right after creating its staging directory
    empty.mkdir()
    foreign = tmp_path / ".gpu-platform-synth-out-notes"  # matches the prefix, but not ours
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep")
    assert runner.invoke(main, ["synth", str(DEV_STACK), "--out", str(out)]).exit_code == 0
    assert not discarded.exists() and not empty.exists()
    assert (foreign / "notes.txt").read_text() == "keep"


def test_force_never_replaces_a_directory_holding_the_home_directory(runner, tmp_path, monkeypatch):
    """`--out /home` would take every user's home with it."""
    homes = tmp_path / "homes"
    (homes / "alice").mkdir(parents=True)
    (homes / "bob").mkdir()
    (homes / "bob" / "thesis.tex").write_text("x")
    monkeypatch.setenv("HOME", str(homes / "alice"))
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["synth", str(DEV_STACK), "--out", str(homes), "--force"])
    assert result.exit_code == 1 and "one holding your home directory" in result.stderr, result.output
    assert (homes / "bob" / "thesis.tex").read_text() == "x"


@pytest.mark.parametrize("system", ["/etc", "/usr", "/var", "/tmp", "/opt", "/usr/local", "/var/lib"])
def test_force_never_replaces_a_system_directory(system):
    """Checked before anything is written (the check alone is called: a failing test must not replace /usr)."""
    from gpu_platform.synth import SynthConflictError, _check_replaceable

    with pytest.raises(SynthConflictError, match="a system directory"):
        _check_replaceable(Path(system))


def test_the_render_has_the_mode_mkdir_gives_not_mkdtemps(tmp_path):
    out = tmp_path / "out"
    old = os.umask(0o022)
    try:
        result = CliRunner().invoke(main, ["synth", str(DEV_STACK), "--out", str(out)])
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    assert out.stat().st_mode & 0o777 == 0o755  # was 0700: another user's `kubectl apply -f` could not read it


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_fifo_in_an_earlier_render_neither_blocks_nor_is_read(tmp_path):
    out = tmp_path / "out"
    (out / "nodepools").mkdir(parents=True)
    os.mkfifo(out / "nodepools" / "zz.yaml")
    proc = subprocess.run(
        [sys.executable, "-m", "gpu_platform.cli", "synth", str(DEV_STACK), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=60,  # it used to wait forever for a writer
    )
    assert proc.returncode == 1 and "holds files an earlier synth did not write (nodepools/zz.yaml)" in proc.stderr
