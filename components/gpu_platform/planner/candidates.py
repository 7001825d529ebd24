"""Candidate pools a planner may open: (instance type, sharing) pairs, and which tiers each can serve.

A candidate is a pool shape: an exclusive pool, a time-slicing or MPS pool with a replica count, or a MIG
pool with one layout per GPU (the spec's `sharing.migLayout` is per pool). Only layouts that are maximal over
the demanded profiles are offered: a layout with more instances never costs more and covers at least as much.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..catalog import Catalog, GpuModel, InstanceType, profiles_for
from ..spec import SharingMode
from .demand import Demand, DemandTier, accepted_modes, gpu_fits
from .mig_packing import Layout, maximal_layouts

__all__ = ["Candidate", "allowed_types", "build_candidates", "profile_memory_gb", "served", "unit_capacity"]

_GB = re.compile(r"\.(\d+)gb")


@dataclass(frozen=True)
class Candidate:
    """One pool shape on one instance type."""

    itype: InstanceType
    mode: SharingMode
    replicas: int | None = None
    layout: Layout | None = None

    @property
    def units_per_gpu(self) -> dict[str, int]:
        """Units one GPU offers, keyed by kind: 'gpu' (whole or shared GPUs) or a MIG profile."""
        if self.mode == SharingMode.MIG:
            return dict(self.layout or ())
        return {"gpu": self.replicas or 1}


def allowed_types(demand: Demand, tier: DemandTier, catalog: Catalog) -> list[InstanceType]:
    """The instance types a tier may run on: its own list, the file's, or every GPU type of the cloud, cut to
    those whose GPU meets the tier's GPU model and memory floor (`demand.gpu_fits`)."""
    names = tier.types_named or demand.types_named
    cloud = demand.cloud.value if demand.cloud else None
    types = (
        [catalog.instance(n) for n in names]
        if names
        else [t for t in catalog.instance_types.values() if t.cloud == cloud]
    )
    return [t for t in types if t is not None and t.cloud == cloud and gpu_fits(tier, t.gpu_model, catalog)]


def profile_memory_gb(profile: str) -> int | None:
    """The GPU memory a MIG profile's name gives (`3g.40gb`: 40), which a whole GPU serving it must have."""
    found = _GB.search(profile)
    return int(found.group(1)) if found else None


# per tier of the demand: the resource and units per GPU a candidate serves it with, None when it cannot
_Serves = tuple[tuple[str, int] | None, ...]


def unit_capacity(tier: DemandTier, cand: Candidate, catalog: Catalog) -> tuple[str, int] | None:
    """(unit kind, units per GPU) when `cand` can serve `tier`, else None."""
    if cand.mode not in accepted_modes(tier):
        return None
    gpu = catalog.gpu(cand.itype.gpu_model)
    if tier.kind == "gpus":
        return ("gpu", 1)
    if tier.kind == "mig":
        profile = tier.mig_demand.profile
        if cand.mode == SharingMode.MIG:
            n = dict(cand.layout or ()).get(profile, 0)
            return (profile, n) if n > 0 else None
        need = profile_memory_gb(profile)
        fits = gpu is not None and need is not None and need <= gpu.memory_gb
        return ("gpu", 1) if fits else None
    return _seat_capacity(tier, cand, gpu)


def _seat_capacity(tier: DemandTier, cand: Candidate, gpu: GpuModel | None) -> tuple[str, int] | None:
    """PerGpu is the most seats a GPU may hold: any pool with that many replicas or fewer serves the tier,
    unless `exactDensity` asks for exactly perGpu."""
    seats, replicas = tier.seat_demand, cand.replicas or 0
    if replicas > seats.per_gpu or (seats.exact_density and replicas != seats.per_gpu):
        return None
    if cand.mode == SharingMode.MPS and (gpu is None or replicas > gpu.mps_max_clients):
        return None
    return ("gpu", replicas)


def _mig_profiles(demand: Demand, itype: InstanceType, catalog: Catalog) -> tuple[str, ...]:
    known = profiles_for(itype.gpu_model)
    return tuple(
        sorted(
            {
                t.mig_demand.profile
                for t in demand.tiers
                if t.kind == "mig"
                and SharingMode.MIG in accepted_modes(t)
                and t.mig_demand.profile in known
                and itype in allowed_types(demand, t, catalog)
            }
        )
    )


def _shapes_for(demand: Demand, itype: InstanceType, catalog: Catalog) -> list[Candidate]:
    shapes = [Candidate(itype, SharingMode.EXCLUSIVE)]
    shared = {(m, t.seat_demand.per_gpu) for t in demand.tiers if t.kind == "seats" for m in accepted_modes(t)}
    shapes += [Candidate(itype, m, r) for m, r in sorted(shared)]
    profiles = _mig_profiles(demand, itype, catalog)
    if profiles:
        shapes += [Candidate(itype, SharingMode.MIG, None, lay) for lay in maximal_layouts(itype.gpu_model, profiles)]
    return shapes


def build_candidates(demand: Demand, catalog: Catalog) -> list[Candidate]:
    """Every candidate pool that at least one tier can use, without dominated ones."""
    types: dict[str, InstanceType] = {}
    for tier in demand.tiers:
        for t in allowed_types(demand, tier, catalog):
            types.setdefault(t.name, t)
    shapes = [cand for itype in types.values() for cand in _shapes_for(demand, itype, catalog)]
    return _undominated(
        [(cand, serves) for cand, serves in zip(shapes, served(demand, shapes, catalog), strict=True) if any(serves)]
    )


def _answers_alike(tier: DemandTier) -> tuple[object, ...]:
    """What `unit_capacity` reads of a tier: tiers with the same key get the same answer from every candidate."""
    modes = accepted_modes(tier)
    if tier.kind == "mig":
        return (tier.kind, tuple(modes), tier.mig_demand.profile)
    if tier.kind == "seats":
        return (tier.kind, tuple(modes), tier.seat_demand.per_gpu, tier.seat_demand.exact_density)
    return (tier.kind, tuple(modes))


def served(demand: Demand, cands: list[Candidate], catalog: Catalog) -> list[_Serves]:
    """Per candidate, per tier: `unit_capacity`, or None where the tier's allowed types leave the candidate's out.
    What a shape serves depends on its GPU model, not its instance type (eight g5 types share the A10G), and on a
    few fields of the tier (`_answers_alike`): worked out once per model and kind of tier, as 1,000 seat tiers ask
    it of about 2,500 candidates (430,000 calls and 2.3 s had been spent on 1,000 tiers of 47 kinds)."""
    allowed = [frozenset(t.name for t in allowed_types(demand, tier, catalog)) for tier in demand.tiers]
    everywhere = frozenset.intersection(*allowed) if allowed else frozenset()
    kinds: dict[tuple[object, ...], int] = {}
    ask: dict[int, DemandTier] = {}  # kind -> its first tier, the one asked
    kind_of = []
    for tier in demand.tiers:
        kind_of.append(kinds.setdefault(_answers_alike(tier), len(kinds)))
        ask.setdefault(kind_of[-1], tier)
    known: dict[tuple[object, ...], _Serves] = {}
    out = []
    for cand in cands:
        key = (cand.mode, cand.replicas, cand.layout, cand.itype.gpu_model)
        if key not in known:
            answers = [unit_capacity(ask[k], cand, catalog) for k in range(len(kinds))]
            known[key] = tuple(answers[k] for k in kind_of)
        row, name = known[key], cand.itype.name
        if name not in everywhere:  # some tier does not allow this type
            row = tuple(s if name in allowed[i] else None for i, s in enumerate(row))
        out.append(row)
    return out


def _undominated(found: list[tuple[Candidate, _Serves]]) -> list[Candidate]:
    """Drop a candidate when a no-dearer one of the same shape serves every tier it serves, the same way."""
    groups: dict[tuple[object, ...], list[tuple[Candidate, _Serves]]] = {}
    for cand, serves in found:
        key = (cand.mode, cand.replicas, cand.layout, cand.itype.gpu_count)
        groups.setdefault(key, []).append((cand, serves))
    keep = []
    for members in groups.values():
        members.sort(key=lambda m: (m[0].itype.hourly_usd, m[0].itype.name))
        for i, (cand, serves) in enumerate(members):
            if not any(all(s is None or s == other[k] for k, s in enumerate(serves)) for _, other in members[:i]):
                keep.append(cand)
    return keep
