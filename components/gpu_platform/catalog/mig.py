"""MIG profiles per GPU model, with NVIDIA's placement rules, and the check that a layout fits one GPU.

Sources: NVIDIA MIG User Guide v580, "Supported MIG Profiles" tables 6/7/8 (compute and memory fractions, max
instances) and "Getting started" `nvidia-smi mig -lgipp` (placements: start slots and size in memory slices);
cross-checked against NVIDIA/mig-parted @ bd7160f4 config-default.yaml (read 2026-08-21). A GPU has 8 memory
slices and 7 compute slices; an instance occupies `size` consecutive memory slices starting at one of `starts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from .resources import mig_resource

__all__ = [
    "MIG_PROFILES",
    "COMPUTE_SLICES",
    "MEMORY_SLICES",
    "MigProfile",
    "layout_fits",
    "placements_for",
    "profiles_for",
]

COMPUTE_SLICES = 7
MEMORY_SLICES = 8


@dataclass(frozen=True)
class MigProfile:
    """One MIG GPU-instance profile on one GPU model."""

    name: str
    compute: int  # compute slices (of 7)
    size: int  # memory slices occupied in the placement grid (of 8)
    starts: tuple[int, ...]  # allowed start slots
    max_instances: int

    @property
    def resource(self) -> str:
        """Extended resource name under the `mixed` MIG strategy."""
        return mig_resource(self.name)


# One shape table shared by every 7-slice GPU; memory in the profile name differs per model.
#        suffix key  compute size starts                   max
_SHAPES = (
    ("1g", 1, 1, (0, 1, 2, 3, 4, 5, 6), 7),
    ("1g+me", 1, 1, (0, 1, 2, 3, 4, 5, 6), 1),
    ("1g.2", 1, 2, (0, 2, 4, 6), 4),
    ("2g", 2, 2, (0, 2, 4), 3),
    ("3g", 3, 4, (0, 4), 2),
    ("4g", 4, 4, (0,), 1),
    ("7g", 7, 8, (0,), 1),
)

# Profile names per model, in the order of _SHAPES.
_NAMES = {
    "A100-SXM4-40GB": ("1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"),
    "A100-SXM4-80GB": ("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
    "H100-80GB": ("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"),
    "H200-141GB": ("1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"),
}

MIG_PROFILES: dict[str, dict[str, MigProfile]] = {
    model: {n: MigProfile(n, c, s, st, m) for n, (_, c, s, st, m) in zip(names, _SHAPES, strict=True)}
    for model, names in _NAMES.items()
}


def profiles_for(gpu_model: str) -> dict[str, MigProfile]:
    """The MIG profiles of a GPU model (empty when the model has no MIG)."""
    return MIG_PROFILES.get(gpu_model, {})


def layout_fits(gpu_model: str, layout: Mapping[str, int]) -> bool:
    """True when `layout` (profile -> count) can be placed on one GPU under NVIDIA's placement rules."""
    return placements_for(gpu_model, tuple(sorted(layout.items()))) is not None


@lru_cache(maxsize=4096)
def placements_for(gpu_model: str, layout: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...] | None:
    """One placement (profile, start slot) per instance, or None when the layout does not fit.

    Unknown profiles, negative counts, more than a profile's max instances, or more than 7 compute
    slices never fit. Otherwise a small exact search over start slots, largest instances first.
    """
    profiles = profiles_for(gpu_model)
    instances: list[MigProfile] = []
    for name, count in layout:
        prof = profiles.get(name)
        if prof is None or count < 0 or count > prof.max_instances:
            return None
        instances += [prof] * count
    if sum(p.compute for p in instances) > COMPUTE_SLICES:
        return None
    instances.sort(key=lambda p: (-p.size, len(p.starts)))
    chosen = _place(instances, 0, 0, ())
    return None if chosen is None else tuple(chosen)


def _place(
    instances: list[MigProfile], i: int, used: int, acc: tuple[tuple[str, int], ...]
) -> tuple[tuple[str, int], ...] | None:
    if i == len(instances):
        return acc
    prof = instances[i]
    # Identical profiles are placed in increasing start order, so permutations are not searched twice.
    floor = acc[-1][1] + 1 if acc and acc[-1][0] == prof.name else 0
    for start in prof.starts:
        mask = ((1 << prof.size) - 1) << start
        if start >= floor and start + prof.size <= MEMORY_SLICES and not used & mask:
            found = _place(instances, i + 1, used | mask, (*acc, (prof.name, start)))
            if found is not None:
                return found
    return None
