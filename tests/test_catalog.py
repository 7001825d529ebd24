"""The hardware catalog: MIG placement check against NVIDIA's shipped layouts, and the data tables."""

from __future__ import annotations

import itertools

import pytest
import yaml

from gpu_platform.catalog import (
    GPU_MODELS,
    INSTANCE_TYPES,
    MIG_PROFILES,
    SOURCES,
    layout_fits,
    placements_for,
)


def _nvidia_layouts(path):
    """(config name, GPU model, layout) for every mig-parted entry that applies to a catalogued GPU."""
    configs = yaml.safe_load(path.read_text())["mig-configs"]
    out = []
    for name, entries in configs.items():
        for entry in entries:
            if not entry.get("mig-enabled") or not entry.get("mig-devices"):
                continue
            filt = entry.get("device-filter")
            filt = [filt] if isinstance(filt, str) else filt
            for model, gpu in GPU_MODELS.items():
                profiles = MIG_PROFILES.get(model, {})
                applies = (
                    (set(f.upper() for f in filt) & {i.upper() for i in gpu.pci_device_ids})
                    if filt
                    else set(entry["mig-devices"]) <= set(profiles) and profiles
                )
                if applies:
                    out.append((name, model, entry["mig-devices"]))
    return out


@pytest.mark.conformance
def test_accepts_every_layout_nvidia_ships(reference):
    layouts = _nvidia_layouts(reference("upstream", "mig-parted-config-default.yaml"))
    models = {m for _, m, _ in layouts}
    assert models == {"A100-SXM4-40GB", "A100-SXM4-80GB", "H100-80GB", "H200-141GB"}
    assert len(layouts) >= 25
    rejected = [(n, m, lay) for n, m, lay in layouts if not layout_fits(m, lay)]
    assert not rejected


@pytest.mark.parametrize(
    ("model", "layout"),
    [
        ("A100-SXM4-80GB", {"3g.40gb": 2, "1g.10gb": 1}),  # memory over-full
        ("A100-SXM4-80GB", {"1g.10gb": 8}),  # more than max instances
        ("A100-SXM4-80GB", {"4g.40gb": 1, "2g.20gb": 2}),  # 2g at slot 4 leaves no even slot for the second
        ("A100-SXM4-80GB", {"7g.80gb": 1, "1g.10gb": 1}),
        ("A100-SXM4-40GB", {"1g.10gb": 4, "1g.5gb": 1}),  # 1g.10gb uses two memory slices each
        ("A100-SXM4-40GB", {"3g.20gb": 1, "2g.10gb": 2, "1g.5gb": 1}),  # 8 compute slices
        ("H100-80GB", {"1g.20gb": 5}),
        ("H200-141GB", {"4g.71gb": 2}),
        ("A10G", {"1g.5gb": 1}),  # no MIG at all
    ],
)
def test_rejects_overfull_and_misplaced(model, layout):
    assert not layout_fits(model, layout)


@pytest.mark.parametrize(
    ("model", "layout"),
    [
        ("A100-SXM4-40GB", {"4g.20gb": 1, "3g.20gb": 1}),
        ("A100-SXM4-40GB", {"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2}),
        ("A100-SXM4-40GB", {"1g.10gb": 1, "1g.5gb": 5}),
        ("A100-SXM4-80GB", {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}),
        ("A100-SXM4-80GB", {"1g.10gb+me": 1, "1g.10gb": 6}),
        ("H200-141GB", {"3g.71gb": 1, "2g.35gb": 1, "1g.18gb": 2}),
    ],
)
def test_accepts_valid_combinations(model, layout):
    assert layout_fits(model, layout)


def _all_layouts(model):
    profiles = list(MIG_PROFILES[model])
    ranges = [range(MIG_PROFILES[model][p].max_instances + 1) for p in profiles]
    for counts in itertools.product(*ranges):
        if any(counts):
            yield dict(zip(profiles, counts, strict=True))


def test_placements_never_overlap_and_respect_starts():
    model = "A100-SXM4-40GB"
    for layout in _all_layouts(model):
        placed = placements_for(model, tuple(sorted(layout.items())))
        if placed is None:
            continue
        used = [0] * 8
        for name, start in placed:
            prof = MIG_PROFILES[model][name]
            assert start in prof.starts
            for s in range(start, start + prof.size):
                used[s] += 1
        assert max(used) <= 1
        assert sum(MIG_PROFILES[model][n].compute for n, _ in placed) <= 7


def test_classic_a100_40gb_combination_count_matches_enumeration():
    """facts.md: 37 valid multisets of the classic profiles (no 1g.10gb, no +me) on A100-40GB (empty excluded)."""
    classic = {"1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"}
    valid = [
        lay
        for lay in _all_layouts("A100-SXM4-40GB")
        if set(k for k, v in lay.items() if v) <= classic and layout_fits("A100-SXM4-40GB", lay)
    ]
    assert len(valid) == 37


def test_instance_types_name_known_models_and_sources():
    for t in INSTANCE_TYPES.values():
        assert t.gpu_model in GPU_MODELS, t
        assert t.source in SOURCES, t
        assert t.gpu_count >= 1 and t.hourly_usd > 0
    assert INSTANCE_TYPES["p4de.24xlarge"].hourly_usd == pytest.approx(27.44705)
    assert INSTANCE_TYPES["a2-megagpu-16g"].gpu_count == 16


def test_every_issue_listed_instance_type_is_catalogued():
    wanted = {
        "p4d.24xlarge",
        "p4de.24xlarge",
        "p5.48xlarge",
        "p5e.48xlarge",
        "a2-highgpu-1g",
        "a2-highgpu-2g",
        "a2-highgpu-4g",
        "a2-highgpu-8g",
        "a2-megagpu-16g",
        "a2-ultragpu-8g",
        "a3-highgpu-8g",
    }
    assert wanted <= set(INSTANCE_TYPES)
    assert any(n.startswith("g5.") for n in INSTANCE_TYPES) and any(n.startswith("g6e.") for n in INSTANCE_TYPES)
    assert any(n.startswith("g2-standard-") for n in INSTANCE_TYPES)
