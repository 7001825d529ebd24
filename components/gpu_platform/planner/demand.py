"""The demand file: per tier, what it needs (whole GPUs, MIG instances or shared seats) and where it may run.

Frozen pydantic v2 models, camelCase on the wire, unknown keys rejected. `parse_demand` raises `SpecError`
with every error at once, each naming its field path, the bad value and what is allowed.
"""

from __future__ import annotations

import copy
import difflib
import functools
import math
import re
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from ..catalog import GPU_MODELS, Catalog, InstanceType, gpu_families
from ..catalog.mig import MIG_PROFILES
from ..errors import Finding, SpecError
from ..inputs import (
    MAX_DEPTH,
    MAX_SPEC_BYTES,
    MAX_VALUES,
    InputLimitError,
    check_shape,
    decode_utf8,
    load_yaml,
    read_bounded,
    source_label,
)
from ..load import _kind, _yaml_problem, field_path, pydantic_findings, value_at
from ..names import shortened, tier_name_problem
from ..spec import MAX_HOURLY_PRICE, Cloud, Number, SharingMode

__all__ = [
    "Demand",
    "DemandTier",
    "accepted_modes",
    "catalog_of",
    "gpu_fits",
    "load_demand",
    "parse_demand",
    "training_models",
]

# Every MIG profile name of the catalog's GPU models, by compute slices then memory: a tier's profile is one of them.
_PROFILES = tuple(
    sorted(
        {p for ps in MIG_PROFILES.values() for p in ps},
        key=lambda p: tuple(int(n) for n in re.findall(r"\d+", p)[:2]) + (p,),
    )
)
# A node price below this (other than 0) is below what the solvers' tolerances tell apart from 0.
MIN_HOURLY_PRICE = 0.0001


def _shown(value: Any) -> str:
    """A value as YAML wrote it: null, true, 5, 'text'."""
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else shortened(value)


def _whole(value: Any) -> Any:
    """A count is a whole number as written: not true / false, "4" or 4.0 (pydantic would read them as 1, 4, 4)."""
    if isinstance(value, bool) or not isinstance(value, int):
        shown = str(value).lower() if isinstance(value, bool) else repr(value)[:60]
        hint = ""
        if isinstance(value, str) and re.fullmatch(r"\s*[-+]?\d+(\.\d*)?[eE][-+]?\d+\s*", value):
            hint = f"; YAML reads {value.strip()} as text, not a number: write the digits out"
        allowed = "a whole number, unquoted (true, false, quoted numbers and decimals are not)"
        raise ValueError(f"{shown}: not a whole number; allowed: {allowed}{hint}")
    return value


Count = Annotated[int, BeforeValidator(_whole)]
"""An integer field: whole numbers only."""


def _price(value: float) -> float:
    if 0 < value < MIN_HOURLY_PRICE:
        allowed = f"0, or {MIN_HOURLY_PRICE} to {MAX_HOURLY_PRICE:,.0f} $/hour"
        raise ValueError(f"{value}: too small a node price; allowed: {allowed}")
    return 0.0 if value == 0 else value  # -0.0 too


_TRAINING_FAMILIES = ", ".join(gpu_families(m for m in GPU_MODELS.values() if m.training_class))


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True, allow_inf_nan=False
    )


MAX_TIERS = 1_000
MAX_GPUS = 100_000  # per tier: above the largest fleets, small enough for the planner to stay quick


class Isolation(StrEnum):
    """How strongly a tier must be kept apart from its neighbours on a GPU (DESIGN's tier model)."""

    EXCLUSIVE = "exclusive"  # whole GPUs only
    HARDWARE = "hardware"  # MIG slices (or whole GPUs)
    PROCESS = "process"  # MPS clients with per-client limits
    NONE = "none"  # time-slicing


class MigDemand(_Model):
    """MIG instances of one profile (the tier's resource is `nvidia.com/mig-<profile>`)."""

    profile: str = Field(description="MIG profile name, e.g. 3g.40gb (names are per GPU model).")
    instances: Count = Field(ge=1, le=7 * MAX_GPUS, description="Instances needed at once.")

    @field_validator("profile")
    @classmethod
    def _known(cls, profile: str) -> str:
        if profile not in _PROFILES:
            known = ", ".join(_PROFILES)
            shown = repr(profile) if len(profile) < 60 else repr(profile[:56]) + "..."
            raise ValueError(f"{shown}: not a MIG profile of any GPU in the catalog; allowed: {known}")
        return profile


class SeatDemand(_Model):
    """Pods sharing a GPU by time-slicing or MPS."""

    count: Count = Field(ge=1, le=48 * MAX_GPUS, description="Seats (pods) needed at once.")
    per_gpu: Count = Field(
        ge=2,
        le=48,
        description="Most seats per GPU (MPS: <= 48): the tier may also share a "
        "pool whose replicas are fewer, where each seat gets more of a GPU.",
    )
    exact_density: StrictBool = Field(default=False, description="true: only a pool whose replicas equal perGpu.")


_KINDS = ("gpus", "mig", "seats")
_NO_CLOUD = Finding("cloud", "missing; set cloud: aws | gcp in the file or pass --cloud")
_ONE_KIND = "set exactly one of gpus, mig, seats (got {got})"
_DEFAULT_ISOLATION = {"gpus": Isolation.EXCLUSIVE, "mig": Isolation.HARDWARE, "seats": Isolation.NONE}


class DemandTier(_Model):
    """One workload class and exactly one of `gpus`, `mig`, `seats`."""

    name: str = Field(description="Tier name (a DNS label); becomes the spec's tier.")
    gpus: Count | None = Field(default=None, ge=1, le=MAX_GPUS, description="Whole GPUs needed (exclusive).")
    mig: MigDemand | None = Field(default=None, description="MIG instances needed.")
    seats: SeatDemand | None = Field(default=None, description="Time-sliced or MPS seats needed.")
    isolation: Isolation | None = Field(
        default=None, description="exclusive | hardware | process | none; default from what the tier needs."
    )
    instance_types: list[str] | None = Field(default=None, description="Allowed types (default: the file's).")
    gpu_model: str | list[str] | None = Field(
        default=None,
        description="GPU model(s) the tier may run on: a catalog name (H100-80GB) or family (H100), "
        f"or `any`; default for a `gpus` tier: training-class ({_TRAINING_FAMILIES}), otherwise any.",
    )
    min_gpu_memory_gib: Count | None = Field(
        default=None,
        alias="minGpuMemoryGiB",
        ge=1,
        le=1024,
        description="Least GPU memory per GPU, in GiB, against the catalog's nominal memory (80 for A100-80GB).",
    )
    priority: Count | None = Field(
        default=None,
        ge=-2147483648,
        le=1000000000,
        description="PriorityClass value (default: the spec's ladder by the pool's sharing mode).",
    )
    description: str | None = Field(default=None, description="Human description, copied to the spec.")

    @field_validator("gpu_model", mode="before")
    @classmethod
    def _model_names(cls, value: Any) -> Any:
        """A name or a list of names: one message for both forms, not one per form."""
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return value
        allowed = "a model (H100-80GB), a family (H100), any, or a list of them (quote a name YAML reads as a number)"
        if value == []:
            raise ValueError(f"[]: an empty list names no GPU model; allowed: {allowed}")
        if not isinstance(value, list):
            raise ValueError(f"{_shown(value)}: not a GPU model name; allowed: {allowed}")
        bad = [f"{_shown(v)} at [{j}]" for j, v in enumerate(value) if not isinstance(v, str)]
        raise ValueError(
            f"{', '.join(bad)}: not {'GPU model names' if bad[1:] else 'a GPU model name'}; allowed: {allowed}"
        )

    @model_validator(mode="after")
    def _one_kind(self) -> DemandTier:
        given = [k for k in _KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(_ONE_KIND.format(got=", ".join(given) or "none"))
        return self

    @functools.cached_property
    def types_named(self) -> tuple[str, ...]:
        """`instanceTypes`, each once (a list may name one type 90,000 times)."""
        return tuple(dict.fromkeys(self.instance_types or ()))

    @property
    def gpu_model_names(self) -> tuple[str, ...]:
        """`gpuModel` as a tuple of the names given (empty when unset)."""
        if self.gpu_model is None:
            return ()
        return (self.gpu_model,) if isinstance(self.gpu_model, str) else tuple(self.gpu_model)

    @property
    def kind(self) -> str:
        """Gpus | mig | seats."""
        return "gpus" if self.gpus is not None else ("mig" if self.mig is not None else "seats")

    @property
    def units(self) -> int:
        """Units demanded: GPUs, MIG instances or seats."""
        return self.gpus or (self.mig.instances if self.mig else self.seat_demand.count)

    @property
    def mig_demand(self) -> MigDemand:
        """`mig` of a mig tier."""
        if self.mig is None:
            raise ValueError(f"tier {self.name!r} asks for {self.kind}, not MIG instances")
        return self.mig

    @property
    def seat_demand(self) -> SeatDemand:
        """`seats` of a seats tier."""
        if self.seats is None:
            raise ValueError(f"tier {self.name!r} asks for {self.kind}, not seats")
        return self.seats

    @property
    def effective_isolation(self) -> Isolation:
        """The isolation class, defaulted from the kind."""
        return self.isolation or _DEFAULT_ISOLATION[self.kind]


class Demand(_Model):
    """A fleet's demand: tiers, the cloud, allowed instance types and prices."""

    cloud: Cloud | None = Field(default=None, description="aws | gcp (or `plan --cloud`).")
    instance_types: list[str] = Field(default_factory=list, description="Types every tier may use by default.")
    price_overrides: dict[str, Annotated[Number, Field(ge=0, le=MAX_HOURLY_PRICE), AfterValidator(_price)]] = Field(
        default_factory=dict, description="Instance type -> $/hour."
    )
    discount_percent: Number = Field(default=0, ge=0, lt=100, description="Flat discount on catalog prices.")
    headroom_percent: Number = Field(default=0, ge=0, le=1000, description="maxSize above the planned nodes.")
    tiers: list[DemandTier] = Field(
        min_length=1, max_length=MAX_TIERS, description="Workload classes and what each needs."
    )

    @functools.cached_property
    def types_named(self) -> tuple[str, ...]:
        """`instanceTypes`, each once."""
        return tuple(dict.fromkeys(self.instance_types))


def accepted_modes(tier: DemandTier) -> list[SharingMode]:
    """Sharing modes that serve the tier's demand within its isolation class, preferred first."""
    return list(_modes(tier.kind, tier.effective_isolation))


@functools.cache
def _modes(kind: str, iso: Isolation) -> tuple[SharingMode, ...]:
    """`accepted_modes` by the tier's kind and isolation (asked once per tier and candidate pool: 2.5 million
    times for 1,000 seat tiers)."""
    if kind == "gpus":
        return (SharingMode.EXCLUSIVE,)
    if kind == "mig":
        return (SharingMode.EXCLUSIVE,) if iso == Isolation.EXCLUSIVE else (SharingMode.MIG, SharingMode.EXCLUSIVE)
    return {Isolation.PROCESS: (SharingMode.MPS,), Isolation.NONE: (SharingMode.TIME_SLICING,)}.get(iso, ())


def training_models(catalog: Catalog) -> frozenset[str]:
    """The catalog's training-class GPU models (A100 40 and 80 GB, H100, H200): where a `gpus` tier that names
    no GPU model or memory floor may run."""
    return frozenset(name for name, gpu in catalog.gpu_models.items() if gpu.training_class)


def _families(catalog: Catalog) -> dict[str, tuple[str, ...]]:
    """Lower-cased family (the name before its first '-': 'h100') and full name -> catalog GPU model names."""
    return _families_of(tuple(sorted(catalog.gpu_models)))


@functools.cache
def _families_of(models: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for name in models:
        out.setdefault(name.lower(), []).append(name)
        family = name.split("-")[0].lower()
        if family != name.lower():
            out.setdefault(family, []).append(name)
    return {k: tuple(v) for k, v in out.items()}


def gpu_models_of(tier: DemandTier, catalog: Catalog) -> frozenset[str] | None:
    """The GPU models a tier may run on, or None for any (unknown names are reported by `parse_demand`)."""
    names = tier.gpu_model_names
    if any(n.lower() == "any" for n in names):
        return None
    if names:
        families = _families(catalog)
        return frozenset(m for n in names for m in families.get(n.lower(), ()))
    if tier.kind == "gpus" and tier.min_gpu_memory_gib is None:
        return training_models(catalog)
    return None


def gpu_fits(tier: DemandTier, gpu_model: str, catalog: Catalog) -> bool:
    """Whether a GPU of `gpu_model` meets the tier's GPU model and memory floor."""
    models = gpu_models_of(tier, catalog)
    gpu = catalog.gpu(gpu_model)
    if models is not None and gpu_model not in models:
        return False
    return tier.min_gpu_memory_gib is None or (gpu is not None and gpu.memory_gb >= tier.min_gpu_memory_gib)


def catalog_of(demand: Demand) -> Catalog:
    """The built-in catalog with the demand's price overrides and discount."""
    return Catalog.build((), demand.price_overrides, demand.discount_percent)


def _check(demand: Demand, catalog: Catalog, cloud: Cloud | None, floors: list[Finding] | None = None) -> list[Finding]:
    """The rules across fields; without a cloud, those that do not read it. `floors`: the GPU-floor findings,
    when the caller has them already."""
    found: list[Finding] = []
    cloud_types = sorted(n for n, t in catalog.instance_types.items() if cloud and t.cloud == cloud.value)
    for name in demand.price_overrides:
        if catalog.instance(name) is None:
            found.append(Finding(f"priceOverrides.{name}", f"{name!r} is not a known instance type"))
    for path, types in [("instanceTypes", demand.instance_types)] + [
        (f"tiers[{i}].instanceTypes", t.instance_types or []) for i, t in enumerate(demand.tiers)
    ]:
        for j, name in enumerate(types):
            itype = catalog.instance(name)
            if cloud is None and itype is None:
                found.append(Finding(f"{path}[{j}]", f"{shortened(name)} is not an instance type in the catalog"))
            elif cloud is not None and (itype is None or itype.cloud != cloud.value):
                found.append(
                    Finding(
                        f"{path}[{j}]",
                        f"{shortened(name)} is not an instance type of {cloud.value} in the catalog; "
                        f"allowed: {', '.join(cloud_types)}",
                    )
                )
    families = _families(catalog)
    allowed_models = sorted(
        {*(m for ms in families.values() for m in ms), *(k.upper() for k in families if "-" not in k)}
    ) + ["any"]
    for i, tier in enumerate(demand.tiers):
        for j, name in enumerate(tier.gpu_model_names):
            if name.lower() != "any" and name.lower() not in families:
                path = f"tiers[{i}].gpuModel" + (f"[{j}]" if isinstance(tier.gpu_model, list) else "")
                same_family = [m for m in families.get(name.split("-")[0].lower(), ()) if "-" in m]
                close = difflib.get_close_matches(name.upper(), same_family or allowed_models, n=1, cutoff=0.3)
                hint = f"did you mean {close[0]!r}? " if close else ""
                found.append(
                    Finding(
                        path,
                        f"{shortened(name)} is not a GPU model in the catalog; {hint}"
                        f"allowed: {', '.join(allowed_models)}",
                    )
                )
    if cloud is not None:
        found += _discount_findings(demand, catalog, cloud)
        found += _gpu_floor_findings(demand, catalog, cloud) if floors is None else floors
    seen: set[str] = set()
    for i, tier in enumerate(demand.tiers):
        if problem := tier_name_problem(tier.name):  # the spec's rule: the plan's tiers become spec tiers
            found.append(Finding(f"tiers[{i}].name", problem))
        if tier.name in seen:
            found.append(Finding(f"tiers[{i}].name", f"duplicate tier name {tier.name!r}"))
        seen.add(tier.name)
        if not accepted_modes(tier):
            found.append(
                Finding(
                    f"tiers[{i}].isolation",
                    f"{tier.effective_isolation.value!r} cannot serve seats "
                    "(seats share a GPU); allowed: process (MPS) or none (time-slicing); use mig for "
                    "hardware isolation",
                )
            )
    return found


def _discount_findings(demand: Demand, catalog: Catalog, cloud: Cloud) -> list[Finding]:
    """A discount that takes a list price the demand may use below what the solver tells from 0 (as a price
    override may not go)."""
    if not demand.discount_percent:
        return []
    file_types = _file_types(demand, catalog, cloud)
    low = sorted(
        (itype.hourly_usd, itype.name)
        for tier in demand.tiers
        for itype in _tier_types(tier, file_types, catalog, cloud)
        if itype.name not in demand.price_overrides
        and 0 < itype.hourly_usd < MIN_HOURLY_PRICE
        and gpu_fits(tier, itype.gpu_model, catalog)
    )
    if not low:
        return []
    price, name = low[0]
    listed = price / (1 - demand.discount_percent / 100)
    most = math.floor((1 - MIN_HOURLY_PRICE / listed) * 1e6) / 1e4
    # as many digits as tell the price from the floor (9.99999e-05, not 0.0001)
    shown = next(f"{price:.{n}g}" for n in range(3, 18) if float(f"{price:.{n}g}") < MIN_HOURLY_PRICE)
    return [
        Finding(
            "discountPercent",
            f"{demand.discount_percent}: takes {name} to {shown} $/hour, below the {MIN_HOURLY_PRICE} a node "
            f"price may be (other than 0); allowed: at most {most:g} for the types this demand's tiers may use",
        )
    ]


def _types_of(catalog: Catalog, cloud: Cloud, names: tuple[str, ...]) -> list[InstanceType]:
    """The catalog's instance types of `cloud` among `names`, each once (a list may name one 90,000 times)."""
    return [t for n in dict.fromkeys(names) if (t := catalog.instance(n)) is not None and t.cloud == cloud.value]


def _file_types(demand: Demand, catalog: Catalog, cloud: Cloud) -> list[InstanceType]:
    """The types a tier without a list of its own may use: the file's, or every type of the cloud."""
    return _types_of(catalog, cloud, demand.types_named or tuple(catalog.instance_types))


def _tier_types(tier: DemandTier, file_types: list[InstanceType], catalog: Catalog, cloud: Cloud) -> list[InstanceType]:
    """The types a tier may use before its GPU rules: its own list's, else the file's (`_file_types`)."""
    return _types_of(catalog, cloud, tier.types_named) if tier.instance_types else file_types


def _gpu_floor_findings(demand: Demand, catalog: Catalog, cloud: Cloud) -> list[Finding]:
    """A tier whose GPU model or memory floor leaves none of its instance types."""
    found = []
    families = _families(catalog)
    file_types = _file_types(demand, catalog, cloud)
    for i, tier in enumerate(demand.tiers):
        if any(n.lower() not in families and n.lower() != "any" for n in tier.gpu_model_names):
            continue  # reported as unknown
        types = _tier_types(tier, file_types, catalog, cloud)
        if not types or any(gpu_fits(tier, t.gpu_model, catalog) for t in types):
            continue
        models = gpu_models_of(tier, catalog)
        wants = []
        if models is not None:
            wants.append(f"a GPU of model {' or '.join(sorted(models))}")
        if tier.min_gpu_memory_gib is not None:
            wants.append(f"a GPU with at least {tier.min_gpu_memory_gib} GiB")
        have = sorted({f"{t.gpu_model} ({gpu.memory_gb} GB)" for t in types if (gpu := catalog.gpu(t.gpu_model))})
        if tier.gpu_model_names:
            path, fix = f"tiers[{i}].gpuModel", "name a model these types have, or allow types that have it"
        elif tier.min_gpu_memory_gib is not None:
            path, fix = f"tiers[{i}].minGpuMemoryGiB", "lower it, or allow types with more GPU memory"
        else:
            path, fix = (
                f"tiers[{i}].gpus",
                "a `gpus` tier runs on training-class GPUs unless it sets gpuModel "
                "(a model, or any) or minGpuMemoryGiB; allow such a type or set one of them",
            )
        found.append(
            Finding(
                path,
                f"no allowed instance type has {' and '.join(wants)}; the allowed types have {', '.join(have)}; {fix}",
            )
        )
    return found


def parse_demand(data: Any, source: str | None = None, cloud: str | None = None) -> Demand:
    """Validate a raw demand object (structure and cross-field rules). Raises SpecError with every error."""
    if not isinstance(data, dict):
        got = "an empty file" if data is None else f"{_kind(data)} ({shortened(data)})"
        what = f"{source} holds" if source else "the demand is"
        raise SpecError(
            [Finding("", f"{what} {got}; allowed: a demand, a mapping with tiers (see examples/demand-small.yaml)")],
            source,
        )
    found: list[Finding] = []
    tiers = data.get("tiers")
    if isinstance(tiers, list) and len(tiers) > MAX_TIERS:  # pydantic checks no item past its length: the first ones
        found.append(Finding("tiers", f"{len(tiers)} items; allowed: at most {MAX_TIERS} items"))
        data = {**data, "tiers": tiers[:MAX_TIERS]}
    try:
        demand = Demand.model_validate(data)
    except ValidationError as e:
        found += pydantic_findings(Demand, e)
        raise SpecError(found + _rules_past_errors(data, e, cloud, {f.path for f in found}), source) from None
    if cloud is not None:
        demand = demand.model_copy(update={"cloud": Cloud(cloud)})
    found += _check(demand, catalog_of(demand), demand.cloud)
    if demand.cloud is None:
        found.insert(0, _NO_CLOUD)
    if found:
        raise SpecError(found, source)
    return demand


# A required value refused (or missing) is replaced by one of these to check the rest of the file; an optional one
# is left out instead.
_STAND_IN: dict[str, Any] = {"gpus": 1, "instances": 1, "count": 1, "perGpu": 2, "profile": _PROFILES[0]}
_REPAIRS = 3  # rounds of repair: a repaired tier may meet a rule its refused fields kept from running
# What the GPU-floor and discount rules read besides the tiers' kinds: a repair of one of these (or of a tier's
# kind) can change what they find.
_READ_BY_FLOORS = ("instanceTypes", "priceOverrides", "gpuModel", "minGpuMemoryGiB")


# A field's name as the file may also give it (instance_types) -> its key (instanceTypes).
_ALIASES = {
    name: info.alias
    for model in (Demand, DemandTier, MigDemand, SeatDemand)
    for name, info in model.model_fields.items()
    if info.alias
}


class _Repairs:
    """What a repair changed: `values`, the paths whose values were replaced or left out (findings there, or
    under them, are the repair's); `read`, those that change what the floor and discount rules read."""

    def __init__(self) -> None:
        self.values: set[str] = set()
        self.read: set[str] = set()

    def add(self, loc: tuple[Any, ...], read: bool) -> None:
        path = field_path(tuple(_ALIASES.get(p, p) if isinstance(p, str) else p for p in loc))
        self.values.add(path)
        if read or any(k in path for k in _READ_BY_FLOORS):
            self.read.add(path)

    def covers(self, path: str) -> bool:
        """Whether `path` is a repaired value or lies under one."""
        return any(p in self.values for p in _prefixes(path))


def _prefixes(path: str) -> list[str]:
    """`tiers[0].mig.profile`, `tiers[0].mig`, `tiers[0]`, `tiers` (a price override's key is one part, dots and
    all: `priceOverrides.foo.bar`, `priceOverrides`)."""
    if path.startswith("priceOverrides."):
        return [path, "priceOverrides"]
    cuts = [k for k, ch in enumerate(path) if ch in ".["]
    return [path, *(path[:k] for k in reversed(cuts))]


def _rules_past_errors(
    data: dict[str, Any], error: ValidationError, cloud: str | None, reported: set[str]
) -> list[Finding]:
    """The cross-field rules' findings (instance types, GPU models, names, the discount) on the file with every
    value pydantic refused left out or replaced by a stand-in, so that every error is reported at once. None at a
    path already `reported` or at a value repaired, and none that a repair could have caused: no GPU-floor finding
    for a tier once a repair changed what the floor reads of it (its types, models, memory floor or kind, or the
    file's types it falls back to), and no discount finding once a repair changed any of those. None at all when
    the file cannot be repaired so."""
    fixed = copy.deepcopy(data)
    repairs = _Repairs()
    for _ in range(_REPAIRS):
        if not _repair(fixed, error, repairs):
            return []
        try:
            demand = Demand.model_validate(fixed)
            break
        except ValidationError as e:
            error = e
    else:
        return []
    chosen = Cloud(cloud) if cloud is not None else demand.cloud
    catalog = catalog_of(demand)
    found = _kind_findings(data, reported) + _override_findings(data, repairs, catalog)
    if chosen is None and "cloud" not in repairs.values and "cloud" not in reported:
        found.append(_NO_CLOUD)
    floor_findings = _gpu_floor_findings(demand, catalog, chosen) if chosen else []
    floors = {f.path for f in floor_findings}
    file_types = any(p.startswith("instanceTypes") for p in repairs.read)
    read_tiers = {p[: p.index("]") + 1] for p in repairs.read if p.startswith("tiers[")}

    def repaired(path: str) -> bool:
        if path in floors:  # the floor's own inputs decide (a count's stand-in changes none of them)
            tier = path[: path.index("]") + 1]
            own_types = demand.tiers[int(tier[len("tiers[") : -1])].instance_types is not None
            return tier in read_tiers or (file_types and not own_types)
        if path == "discountPercent" and repairs.read:
            return True
        return path in reported or repairs.covers(path)

    return found + [f for f in _check(demand, catalog, chosen, floor_findings) if not repaired(f.path)]


def _kind_findings(data: dict[str, Any], reported: set[str]) -> list[Finding]:
    """`DemandTier._one_kind` for the tiers whose other errors kept it from running."""
    tiers = data.get("tiers")
    found = []
    for i, tier in enumerate(tiers if isinstance(tiers, list) else []):
        given = [k for k in _KINDS if isinstance(tier, dict) and tier.get(k) is not None]
        if isinstance(tier, dict) and len(given) != 1 and f"tiers[{i}]" not in reported:
            found.append(Finding(f"tiers[{i}]", _ONE_KIND.format(got=", ".join(given) or "none")))
    return found


def _override_findings(data: dict[str, Any], repairs: _Repairs, catalog: Catalog) -> list[Finding]:
    """An unknown instance type among the price overrides whose price was refused (the rule that names it runs on
    the repaired file, where the entry is gone)."""
    given = data.get("priceOverrides") or data.get("price_overrides")
    return [
        Finding(path, f"{shortened(name)} is not a known instance type")
        for path in sorted(repairs.values)
        if path.startswith("priceOverrides.")
        and (name := path[len("priceOverrides.") :]) in (given if isinstance(given, dict) else {})
        and catalog.instance(name) is None
    ]


def _repair(fixed: dict[str, Any], error: ValidationError, repairs: _Repairs) -> bool:
    """Each value `error` refuses in `fixed` left out or replaced by a stand-in, noted in `repairs`; False when
    one cannot be."""
    for err in error.errors():
        loc = _data_loc(fixed, tuple(err["loc"]), err["type"] == "missing")
        if loc is None:
            return False
        *where, last = loc
        owner = value_at(fixed, tuple(where))
        field = _ALIASES.get(last, last) if isinstance(last, str) else last
        if isinstance(owner, list) and tuple(where) == ("tiers",):  # a whole tier
            if isinstance(owner[last], dict):  # `_one_kind`: its first kind given, or gpus
                kind = next((k for k in _KINDS if owner[last].get(k) is not None), "gpus")
                owner[last][kind] = owner[last].get(kind) if owner[last].get(kind) is not None else 1
                for k in set(_KINDS) - {kind}:
                    owner[last].pop(k, None)
                repairs.read.add(field_path(loc))  # its kind, which the floors read
                continue
            owner[last] = {"name": _stand_in_name(fixed, last), "gpus": 1}
            repairs.add(loc, read=True)
        elif isinstance(owner, list):  # an item of a list of names that is no name: one no rule finds
            owner[last] = ""
            repairs.add(loc, read=True)
        elif err["type"] == "extra_forbidden":  # an unknown key, whatever its name
            del owner[last]
            repairs.add(loc, read=False)
        elif field == "gpuModel" and isinstance(owner[last], list) and owner[last]:
            bad = [j for j, v in enumerate(owner[last]) if not isinstance(v, str)]
            owner[last] = ["" if j in bad else v for j, v in enumerate(owner[last])]
            for j in bad:
                repairs.add((*loc, j), read=True)
        elif loc == ("tiers",):  # no list of tiers: one stand-in tier
            owner["tiers"] = [{"name": "-", "gpus": 1}]
            repairs.add(loc, read=True)
        elif field in _STAND_IN:  # a count or profile: the tier's kind stays what it is
            owner[last] = _STAND_IN[field]
            repairs.add(loc, read=False)
        elif field == "name" and loc[:1] == ("tiers",):
            owner[last] = _stand_in_name(fixed, loc[1])
            repairs.add(loc, read=False)
        elif last in owner:
            del owner[last]
            repairs.add(loc, read=field in _KINDS)  # a kind left out changes the tier's kind
        else:
            return False
    return True


def _stand_in_name(data: dict[str, Any], i: int) -> str:
    """A name for tier `i` that no tier of `data` has (and no DNS label, so it is never taken for one)."""
    tiers = data.get("tiers")
    names = (
        {t["name"] for t in tiers if isinstance(t, dict) and isinstance(t.get("name"), str)}
        if isinstance(tiers, list)
        else set()
    )
    name = f"-{i}-"
    while name in names:
        name += "-"
    return name


def _data_loc(data: Any, loc: tuple[Any, ...], missing: bool) -> tuple[Any, ...] | None:
    """The part of an error's location that is in `data` (pydantic adds a union member's name, as in
    gpuModel.list[str][0]), ending at a key of a mapping or an index of `tiers`; a missing key's location as it is.
    None when there is no such part."""
    node, kept = data, 0
    for part in loc:
        listed = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if not (listed or isinstance(node, dict) and part in node):
            break
        node, kept = node[part], kept + 1
    if missing and kept == len(loc) - 1:
        return loc
    return loc[:kept] if kept else None


def load_demand(path: str | Path, cloud: str | None = None) -> Demand:
    """Read and validate the demand file at `path`."""
    label = source_label(path)
    try:
        data = load_yaml(decode_utf8(read_bounded(path, MAX_SPEC_BYTES, "demand"), path, "demand"))
        check_shape(data, MAX_VALUES, MAX_DEPTH)
    except (InputLimitError, ValueError) as e:
        raise SpecError([Finding("", str(e))], label) from None
    except yaml.YAMLError as e:
        raise SpecError([Finding("", f"not valid YAML: {_yaml_problem(e)}")], label) from None
    if isinstance(data, dict) and "runtime" in data and "name" in data:
        raise SpecError(
            [
                Finding(
                    "",
                    "this is a Pulumi project file (name, runtime); allowed: a demand (tiers with gpus, mig or seats; "
                    "see examples/demand-small.yaml)",
                )
            ],
            label,
        )
    if isinstance(data, dict) and "apiVersion" in data and "kind" in data:
        raise SpecError(
            [
                Finding(
                    "",
                    f"this is a Kubernetes object ({shortened(data['kind'])}); allowed: a demand. `gpu-platform "
                    "explain WORKLOAD --spec SPEC` takes a workload manifest",
                )
            ],
            label,
        )
    if isinstance(data, dict) and ("nodePools" in data or "config" in data):
        raise SpecError(
            [
                Finding(
                    "",
                    "this is a platform spec or stack file (nodePools or config:), which validate, synth and cost "
                    "take; allowed: a demand (tiers with gpus, mig or seats; see examples/demand-small.yaml)",
                )
            ],
            label,
        )
    return parse_demand(data, label, cloud)
