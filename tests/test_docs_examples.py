"""Every fenced example in the README and in docs/ runs.

Each fence carries a marker on the line before it, `<!-- example: KIND key=value ... -->`, saying how it is run:

- `spec`: a whole spec (plain, or a `Pulumi.<stack>.yaml` with `gpu-platform:platform`): it validates, and its
  `model_dump(by_alias=True)` loads back to the same spec;
- `fragment base=FILE`: top-level keys that replace the same keys of FILE's spec (or, with `base=plan:DEMAND`, of
  the spec fragment `gpu-platform plan DEMAND` prints): the result validates;
- `invalid base=FILE error=PATH`: the same merge is rejected with an error at field PATH;
- `shell`: each line is a command: `gpu-platform ...` runs (exit 0, `--out` into a temporary folder), `make X`
  must be a target (`make -n X`);
- `pip`: each line installs this project: the name and extras are the project's, from git or from a checkout
  (tests/test_install.py installs the built package with each extra into fresh venvs);
- `pulumi`: lines for the Pulumi CLI, which the tests cannot run without a cloud: every file, folder and stack
  they name exists, and `make` / `gpu-platform` lines in them run as under `shell`;
- `python`: the code runs under Pulumi mocks, from the repository root;
- `output cmd="..." [match=prefix]`: the block is what the command prints (its beginning, with `prefix`);
- `transcript [exit=N]`: the first line is `$ COMMAND`, the rest its output, and it exits N (default 0);
- `manifest spec=FILE namespace=NS [wrap=Pod] [exit=N]`: Kubernetes objects that `gpu-platform explain` runs
  through FILE's platform in NS (a pod fragment completed into a Pod with `wrap=Pod`): exit N (default 0);
- `file path=FILE`: the block holds the same YAML documents as FILE;
- `layout`: each line starts with paths of this repository, which exist;
- `tested-by test=tests/FILE.py::NAME`: a dedicated test checks the block against what the code renders.

A fence without a marker fails the run. The generated reference pages (docs/reference/spec.md, cli.md) are
checked against the code by tests/test_readme.py instead.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import textwrap
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from conftest import ROOT
from helpers.docs import DOCS, README, pages

GENERATED = {DOCS / "reference" / "spec.md", DOCS / "reference" / "cli.md"}
MARKER = re.compile(r"^\s*<!-- example: ([\w-]+)(.*?)-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,})(\S*)")


@dataclass
class Example:
    """One fenced block and how it is run."""

    source: str
    line: int
    kind: str
    args: dict[str, str] = field(default_factory=dict)
    body: str = ""

    @property
    def id(self) -> str:
        return f"{self.source}:{self.line}:{self.kind}"


def _parse(path: Path) -> tuple[list[Example], list[str]]:
    """The marked examples of one page, and the places of fences without a marker."""
    lines = path.read_text().splitlines()
    name = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    found, unmarked, i = [], [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        ticks = m.group(2)
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == ticks)
        body = textwrap.dedent("\n".join(lines[i + 1 : end])) + "\n"
        prev = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = MARKER.match(prev)
        if marker:
            args = dict(shlex.split(a)[0].split("=", 1) for a in re.findall(r'\w+=(?:"[^"]*"|\S+)', marker.group(2)))
            found.append(Example(name, i + 1, marker.group(1), {k: v.strip('"') for k, v in args.items()}, body))
        else:
            unmarked.append(f"{name}:{i + 1}")
        i = end + 1
    return found, unmarked


def _sources() -> list[Path]:
    return [README, *(p for p in pages() if p not in GENERATED)]


def _all() -> tuple[list[Example], list[str]]:
    examples, unmarked = [], []
    for path in _sources():
        e, u = _parse(path)
        examples += e
        unmarked += u
    return examples, unmarked


EXAMPLES, UNMARKED = _all()


def test_every_fence_is_a_marked_example():
    assert not UNMARKED, f"fenced blocks without an `<!-- example: KIND -->` marker: {UNMARKED}"
    assert len(EXAMPLES) >= 20


def test_every_kind_is_known():
    assert {e.kind for e in EXAMPLES} <= set(RUNNERS), {e.kind for e in EXAMPLES} - set(RUNNERS)


# --- runners -------------------------------------------------------------------------------------------------------


def _spec_data(text_or_path: str | Path) -> dict:
    data = yaml.safe_load(Path(text_or_path).read_text() if isinstance(text_or_path, Path) else text_or_path)
    return data["config"]["gpu-platform:platform"] if "config" in data else data


def _round_trip(spec) -> None:
    from gpu_platform.load import parse_spec

    dumped = yaml.safe_load(yaml.safe_dump(spec.model_dump(by_alias=True, mode="json")))
    assert parse_spec(dumped) == spec


def run_spec(ex: Example, **_) -> None:
    from gpu_platform.load import parse_spec

    _round_trip(parse_spec(_spec_data(ex.body)))


def _base(base: str) -> dict:
    """A spec file's spec, or with `plan:DEMAND` the spec fragment `gpu-platform plan DEMAND` prints."""
    if base.startswith("plan:"):
        from gpu_platform.planner import load_demand, plan, spec_fragment

        return spec_fragment(plan(load_demand(str(ROOT / base.removeprefix("plan:")))))
    return _spec_data(ROOT / base)


def _merged(ex: Example) -> dict:
    return {**_base(ex.args.get("base", "Pulumi.dev.yaml")), **yaml.safe_load(ex.body)}


def run_fragment(ex: Example, **_) -> None:
    from gpu_platform.load import parse_spec

    parse_spec(_merged(ex))


def run_invalid(ex: Example, **_) -> None:
    from gpu_platform.errors import SpecError
    from gpu_platform.load import parse_spec

    with pytest.raises(SpecError) as e:
        parse_spec(_merged(ex))
    assert ex.args["error"] in [f.path for f in e.value.findings], e.value.findings


def _cli(args: list[str], tmp_path: Path):
    from gpu_platform.cli import main

    if "--out" in args:
        i = args.index("--out") + 1
        args = [*args[:i], str(tmp_path / Path(args[i]).name), *args[i + 1 :]]
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        return CliRunner().invoke(main, args)
    finally:
        os.chdir(cwd)


def _command(line: str, tmp_path: Path, allow: tuple[str, ...] = ()) -> None:
    words = shlex.split(line, comments=True)
    if not words:
        return
    if words[0] in ("gpu-platform", ".venv/bin/gpu-platform"):
        res = _cli(words[1:], tmp_path)
        assert res.exit_code == 0, f"{line}\n{res.output}"
    elif words[0] == "make":
        res = subprocess.run(["make", "-n", *words[1:]], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, f"{line}: {res.stderr}"
    else:
        assert words[0] in allow, f"{line}: not a command a `shell` example may show"


def run_shell(ex: Example, tmp_path: Path, **_) -> None:
    for line in ex.body.splitlines():
        _command(line, tmp_path)


def _options_exist(words: list[str]) -> None:
    """A `gpu-platform X --opt ...` that reads Pulumi's output: X exists and takes every option shown."""
    res = _cli([words[1], "--help"], Path("."))
    assert res.exit_code == 0, res.output
    for opt in (w for w in words[2:] if w.startswith("--")):
        assert opt in res.output, f"`gpu-platform {words[1]}` has no option {opt}"


def _pulumi_segment(words: list[str], line: str, tmp_path: Path) -> None:
    if words[0] == "make":
        _command(shlex.join(words), tmp_path)
        return
    if words[0] == "gpu-platform":
        _options_exist(words)
        return
    for w in (w for w in words if re.match(r"^[A-Z_]+=", w)):
        assert (ROOT / w.split("=", 1)[1]).exists(), f"{line}: {w} names no file"
    if "--policy-pack" in words:
        assert (ROOT / words[words.index("--policy-pack") + 1] / "PulumiPolicy.yaml").exists(), line
    stack = (
        words[words.index("--stack") + 1]
        if "--stack" in words
        else (words[words.index("select") + 1] if words[:3] == ["pulumi", "stack", "select"] else None)
    )
    if stack:
        assert (ROOT / f"Pulumi.{stack}.yaml").exists(), f"{line}: no stack file Pulumi.{stack}.yaml"


def run_pulumi(ex: Example, tmp_path: Path, **_) -> None:
    """Pulumi CLI lines: the files, folders and stacks they name exist; `make` lines are targets and the
    `gpu-platform` commands fed by Pulumi's output take the options shown."""
    folder = ROOT
    for line in ex.body.replace("\\\n", " ").splitlines():
        for segment in re.split(r"&&|\||;|\(|\)", line.split(" #", 1)[0]):
            words = shlex.split(segment)
            words = [w for w in words if w != ">" and not w.endswith(".json") or w.startswith("--")] if words else []
            if not words:
                continue
            if words[0] == "cd":
                folder = ROOT / words[1]
                assert folder.is_dir(), line
            elif words[0] == "pip" and "-r" in words:
                assert (folder / words[words.index("-r") + 1]).exists(), line
            else:
                _pulumi_segment(words, line, tmp_path)


def run_pip(ex: Example, **_) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = set(project["optional-dependencies"])
    for line in ex.body.splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        assert words[:2] == ["pip", "install"], line
        target = words[-1]
        name, wanted = re.match(r"^(.*?)\[([\w,]+)\]", target).groups()
        assert set(wanted.split(",")) <= extras, f"{line}: unknown extra; allowed: {sorted(extras)}"
        if " @ " in target:
            assert name == project["name"] and target.split(" @ ", 1)[1].startswith("git+https://"), line
        else:  # a checkout: this repository stands for /path/to/gpu-platform
            assert name.endswith("/gpu-platform") and (ROOT / "pyproject.toml").exists(), line


def run_python(ex: Example, pulumi_mocks, monkeypatch, **_) -> None:
    monkeypatch.chdir(ROOT)
    pulumi_mocks.run(lambda: exec(compile(ex.body, ex.id, "exec"), {"__name__": "__example__"}))
    assert pulumi_mocks.resources, "the example registered no resource"


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.rstrip("\n").splitlines()]


def run_output(ex: Example, tmp_path: Path, **_) -> None:
    cmd = shlex.split(ex.args["cmd"].replace("{tmp}", str(tmp_path)))
    res = _cli(cmd[1:], tmp_path)
    assert res.exit_code == int(ex.args.get("exit", 0)), res.output
    shown, got = _lines(ex.body), _lines(res.stdout)
    assert (got[: len(shown)] if ex.args.get("match") == "prefix" else got) == shown


def run_transcript(ex: Example, tmp_path: Path, **_) -> None:
    first, *rest = ex.body.rstrip("\n").splitlines()
    assert first.startswith("$ gpu-platform "), first
    res = _cli(shlex.split(first[2:])[1:], tmp_path)
    assert res.exit_code == int(ex.args.get("exit", 0)), res.output
    assert _lines(res.output) == [line.rstrip() for line in rest]


def _as_pod(doc: dict) -> dict:
    pod = {"apiVersion": "v1", "kind": "Pod", **doc}
    pod.setdefault("metadata", {}).setdefault("name", "example")
    for i, c in enumerate(pod["spec"]["containers"]):
        c.setdefault("name", f"c{i}")
        c.setdefault("image", "busybox")
    return pod


def run_manifest(ex: Example, tmp_path: Path, **_) -> None:
    docs = [d for d in yaml.safe_load_all(ex.body) if d]
    if ex.args.get("wrap") == "Pod":
        docs = [_as_pod(d) for d in docs]
    path = tmp_path / "workload.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    res = _cli(["explain", str(path), "--spec", ex.args["spec"], "--namespace", ex.args["namespace"]], tmp_path)
    assert res.exit_code == int(ex.args.get("exit", 0)), res.output


def run_file(ex: Example, **_) -> None:
    assert list(yaml.safe_load_all(ex.body)) == list(yaml.safe_load_all((ROOT / ex.args["path"]).read_text()))


def run_layout(ex: Example, **_) -> None:
    for line in ex.body.splitlines():
        head = re.split(r"\s{2,}", line.strip())[0]
        for path in head.split(", "):
            assert (ROOT / path).exists(), f"{line}: {path} does not exist"


def run_tested_by(ex: Example, **_) -> None:
    file, name = ex.args["test"].split("::")
    assert re.search(rf"^def {name}\(", (ROOT / file).read_text(), flags=re.M), f"{ex.args['test']} is missing"


RUNNERS = {
    "spec": run_spec,
    "fragment": run_fragment,
    "invalid": run_invalid,
    "shell": run_shell,
    "pulumi": run_pulumi,
    "pip": run_pip,
    "python": run_python,
    "output": run_output,
    "transcript": run_transcript,
    "manifest": run_manifest,
    "file": run_file,
    "layout": run_layout,
    "tested-by": run_tested_by,
}


@pytest.mark.parametrize("ex", EXAMPLES, ids=lambda e: e.id)
def test_example_runs(ex: Example, tmp_path, request, monkeypatch):
    kwargs = {"tmp_path": tmp_path, "monkeypatch": monkeypatch}
    if ex.kind == "python":
        kwargs["pulumi_mocks"] = request.getfixturevalue("pulumi_mocks")
    RUNNERS[ex.kind](ex, **kwargs)


def test_every_example_spec_round_trips_through_model_dump():
    """Every spec the project ships or shows: dumped with model_dump(by_alias=True) it loads back unchanged."""
    from gpu_platform.load import load_spec, parse_spec

    files = [ROOT / "Pulumi.dev.yaml", *sorted((ROOT / "examples").glob("*.yaml"))]
    specs = [
        load_spec(str(f)) for f in files if "gpu-platform:platform" in f.read_text() or "nodePools" in f.read_text()
    ]
    specs += [parse_spec(_spec_data(e.body)) for e in EXAMPLES if e.kind == "spec"]
    assert len(specs) >= 5
    for spec in specs:
        _round_trip(spec)
        # with every default written out, and with only what was set
        assert parse_spec(spec.model_dump(by_alias=True, mode="json", exclude_unset=True)) == spec


def test_unmarked_fence_is_reported(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n```yaml\na: 1\n```\n\n<!-- example: spec -->\n```yaml\nb: 2\n```\n")
    examples, unmarked = _parse(page)
    assert [(e.kind, e.body) for e in examples] == [("spec", "b: 2\n")] and unmarked == [f"{page}:3"]
