"""Conformance data: every test that needs the upstream files carries the marker, and without the files the run
says in one line what it left out and where to get the data (in CI the same tests must run, not skip)."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import CONFORMANCE_FIXTURES, ROOT


def test_tests_using_reference_data_or_promtool_carry_the_marker(request):
    using = [i for i in request.session.items if CONFORMANCE_FIXTURES & set(getattr(i, "fixturenames", ()))]
    assert all(i.get_closest_marker("conformance") for i in using)


def _pytest(env: dict[str, str]) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if k not in ("CI", "GPU_PLATFORM_REFERENCE")}, **env}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "tests/test_catalog.py",
            "-k",
            "nvidia_ships or accepts",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_without_the_data_one_line_names_what_was_left_out_and_how_to_get_it(tmp_path):
    res = _pytest({"GPU_PLATFORM_REFERENCE": str(tmp_path / "absent")})
    assert res.returncode == 0, res.stdout[-2000:]
    [line] = [line for line in res.stdout.splitlines() if line.startswith("conformance:")]
    assert "skipped 1 tests" in line and str(tmp_path / "absent") in line and "GPU_PLATFORM_REFERENCE" in line


def test_in_ci_missing_data_fails_instead_of_skipping(tmp_path):
    res = _pytest({"GPU_PLATFORM_REFERENCE": str(tmp_path / "absent"), "CI": "true"})
    assert res.returncode == 1 and "reference file missing in CI" in res.stdout
