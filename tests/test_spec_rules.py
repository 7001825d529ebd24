"""Every validation rule: an invalid spec whose message names the field path, the bad value and what is allowed."""

from __future__ import annotations

import pytest

from gpu_platform.errors import Severity, SpecError
from gpu_platform.load import parse_spec
from helpers.specs import pool, pool_path, team, team_path, tier, tier_path


def _set(data, path, value):
    *parents, last = path
    for p in parents:
        data = data[p]
    if value is _DELETE:
        del data[last]
    else:
        data[last] = value


_DELETE = object()

# (id, [(path, value)...], expected field path, expected words in the message)
CASES = [
    ("unknown-key", [(("nodePools", 0, "sharng"), 1)], "nodePools[0].sharng", "did you mean 'sharing'"),
    ("unknown-top-key", [(("labeldomain",), "x")], "labeldomain", "did you mean 'labelDomain'"),
    ("bad-enum", [(("cloud",), "azure")], "cloud", "'aws' or 'gcp'"),
    ("missing-field", [(("nodePools", 0, "maxSize"), _DELETE)], "nodePools[0].maxSize", "required"),
    ("negative-size", [(("nodePools", 0, "maxSize"), -1)], "nodePools[0].maxSize", "greater than or equal to 0"),
    ("min-gt-max", [(("nodePools", 2, "minSize"), 9)], "nodePools[2].minSize", "greater than maxSize 4"),
    (
        "unclassified-pool",
        [
            (
                ("tiers",),
                [
                    {"name": "train", "pool": "gpu-train", "priority": 1},
                    {"name": "inference", "pool": "gpu-infer", "priority": 1},
                    {"name": "finetune", "pool": "gpu-infer", "resource": "nvidia.com/mig-2g.20gb", "priority": 1},
                    {"name": "dev", "pool": "gpu-dev", "priority": 1},
                ],
            ),
            (("teams", 1, "quotas"), {"inference": 1}),
        ],
        "nodePools[3]",
        "'gpu-ci' is unclassified",
    ),
    ("dup-pool", [(("nodePools", 1, "name"), "gpu-train")], "nodePools[1].name", "duplicate pool name 'gpu-train'"),
    ("dup-tier", [(("tiers", 1, "name"), "train")], "tiers[1].name", "duplicate tier name"),
    ("dup-team", [(("teams", 1, "name"), "research")], "teams[1].name", "duplicate team name"),
    ("bad-label-value", [(("tiers", 0, "name"), "Train!")], "tiers[0].name", "lower-case DNS label"),
    ("long-name", [(("teams", 0, "name"), "x" * 64)], "teams[0].name", "at most 63"),
    (
        "unknown-instance",
        [(("nodePools", 0, "instanceType"), "p9.huge")],
        "nodePools[0].instanceType",
        "'p9.huge' is not in the catalog for aws",
    ),
    (
        "cloud-mismatch",
        [(("nodePools", 0, "instanceType"), "a2-highgpu-8g")],
        "nodePools[0].instanceType",
        "is a GCP type but cloud is 'aws'",
    ),
    ("missing-cloud-section", [(("aws",), _DELETE)], "aws", "section is required"),
    (
        "mig-not-capable",
        [(("nodePools", 1, "instanceType"), "g6e.48xlarge")],
        "nodePools[1].sharing.mode",
        "L40S, which has no MIG",
    ),
    (
        "unknown-profile",
        [(("nodePools", 1, "sharing", "migLayout"), {"3g.20gb": 2})],
        "nodePools[1].sharing.migLayout.3g.20gb",
        "not a MIG profile of A100-SXM4-80GB",
    ),
    (
        "layout-overfull",
        [(("nodePools", 1, "sharing", "migLayout"), {"3g.40gb": 2, "1g.10gb": 1})],
        "nodePools[1].sharing.migLayout",
        "does not fit one A100-SXM4-80GB",
    ),
    (
        "layout-too-many",
        [(("nodePools", 1, "sharing", "migLayout"), {"1g.10gb": 8})],
        "nodePools[1].sharing.migLayout",
        "does not fit",
    ),
    (
        "layout-misplaced",
        [(("nodePools", 1, "sharing", "migLayout"), {"4g.40gb": 1, "2g.20gb": 2})],
        "nodePools[1].sharing.migLayout",
        "placement",
    ),
    (
        "layout-empty",
        [(("nodePools", 1, "sharing", "migLayout"), {})],
        "nodePools[1].sharing.migLayout",
        "missing or empty",
    ),
    ("ts-replicas-1", [(("nodePools", 2, "sharing", "replicas"), 1)], "nodePools[2].sharing.replicas", ">= 2"),
    (
        "ts-replicas-missing",
        [(("nodePools", 2, "sharing", "replicas"), _DELETE)],
        "nodePools[2].sharing.replicas",
        "needs replicas >= 2",
    ),
    ("mps-replicas-49", [(("nodePools", 3, "sharing", "replicas"), 49)], "nodePools[3].sharing.replicas", "2..48"),
    (
        "exclusive-replicas",
        [(("nodePools", 0, "sharing", "replicas"), 4)],
        "nodePools[0].sharing.replicas",
        "not allowed with mode 'exclusive'",
    ),
    (
        "layout-on-ts",
        [(("nodePools", 2, "sharing", "migLayout"), {"1g.10gb": 7})],
        "nodePools[2].sharing.migLayout",
        "only allowed with mode 'mig'",
    ),
    (
        "mig-tier-wrong-resource",
        [(("tiers", 1, "resource"), "nvidia.com/gpu")],
        "tiers[1].resource",
        "allowed: nvidia.com/mig-3g.40gb, nvidia.com/mig-2g.20gb, nvidia.com/mig-1g.10gb",
    ),
    ("mig-tier-no-resource", [(("tiers", 1, "resource"), _DELETE)], "tiers[1].resource", "missing"),
    (
        "non-mig-tier-resource",
        [(("tiers", 0, "resource"), "nvidia.com/mig-1g.10gb")],
        "tiers[0].resource",
        "allowed: nvidia.com/gpu",
    ),
    ("tier-unknown-pool", [(("tiers", 0, "pool"), "nope")], "tiers[0].pool", "'nope' is not a pool"),
    ("quota-unknown-tier", [(("teams", 0, "quotas", "bogus"), 3)], "teams[0].quotas.bogus", "'bogus' is not a tier"),
    ("borrow-no-cohort", [(("teams", 0, "cohort"), _DELETE)], "teams[0].borrowingLimit", "needs a cohort"),
    ("lend-no-cohort", [(("teams", 1, "lendingLimit"), {"inference": 2})], "teams[1].lendingLimit", "needs a cohort"),
    (
        "namespace-two-teams",
        [(("teams", 1, "namespaces"), ["research"])],
        "teams[1].namespaces[0]",
        "already belongs to team 'research'",
    ),
    ("label-domain", [(("labelDomain",), "GPU_Example")], "labelDomain", "not a DNS subdomain"),
    ("k8s-version", [(("kubernetesVersion",), "latest")], "kubernetesVersion", "not a minor version"),
    (
        "custom-type-bad-gpu",
        [(("catalog",), {"instanceTypes": [{"name": "x.large", "gpuModel": "B300", "gpuCount": 1, "hourlyPrice": 1}]})],
        "catalog.instanceTypes[0].gpuModel",
        "'B300' is not a known GPU model",
    ),
    (
        "price-unknown-type",
        [(("catalog",), {"priceOverrides": {"z.large": 1.0}})],
        "catalog.priceOverrides.z.large",
        "not a known instance type",
    ),
    ("gcp-block-on-aws", [(("nodePools", 0, "gcp"), {"spot": True})], "nodePools[0].gcp", "cloud is 'aws'"),
    ("priority-too-high", [(("tiers", 0, "priority"), 2_000_000_000)], "tiers[0].priority", "less than or equal"),
    (
        "lend-over-quota",
        [(("teams", 0, "lendingLimit"), {"dev": 9})],
        "teams[0].lendingLimit.dev",
        "9 exceeds the quota 8; allowed: 0..quota",
    ),
    (
        "limit-without-quota",
        [(("teams", 0, "borrowingLimit"), {"inference": 2})],
        "teams[0].borrowingLimit.inference",
        "without a quota for it; add quotas.inference",
    ),
    (
        "cohort-cycle",
        [(("scheduling", "cohorts"), [{"name": "ml", "parent": "org"}, {"name": "org", "parent": "ml"}])],
        "scheduling.cohorts[0].parent",
        "makes a cycle",
    ),
    (
        "cohort-unknown-parent",
        [(("scheduling", "cohorts"), [{"name": "org"}, {"name": "ml", "parent": "orgg"}])],
        "scheduling.cohorts[1].parent",
        "'orgg' is not a cohort; allowed: org",
    ),
    (
        "negative-mig-count",
        [(("nodePools", 1, "sharing", "migLayout", "1g.10gb"), -1)],
        "nodePools[1].sharing.migLayout.1g.10gb",
        "greater than or equal to 0",
    ),
    (
        "layout-hint-per-model",
        [(("nodePools", 2, "sharing"), {"mode": "mig", "migLayout": {"3g.20gb": 3}})],
        "nodePools[2].sharing.migLayout",
        "at most 3g.20gb x2 per GPU); allowed: a layout that fits, e.g. {'3g.20gb': 2} (the most of this one that "
        "fits) or {'3g.20gb': 1, '2g.10gb': 1, '1g.5gb': 2}",
    ),
    (
        "layout-hint-keeps-the-users-profiles",
        [(("nodePools", 1, "sharing", "migLayout"), {"4g.40gb": 1, "3g.40gb": 1, "1g.10gb": 1})],
        "nodePools[1].sharing.migLayout",
        "allowed: a layout that fits, e.g. {'4g.40gb': 1, '3g.40gb': 1} (the most of this one that fits)",
    ),
    (
        "cloud-mismatch-still-checks-sharing",
        [(("nodePools", 2, "instanceType"), "a2-highgpu-8g"), (("nodePools", 2, "sharing", "replicas"), 1)],
        "nodePools[2].sharing.replicas",
        "1 is too small",
    ),
    (
        "yaml-number-for-string",
        [(("kubernetesVersion",), 1.33)],
        "kubernetesVersion",
        "1.33: Input should be a valid string; quote it in YAML",
    ),
    (
        "yaml-boolean-shown-as-written",
        [(("clusterName",), True)],
        "clusterName",
        "true: Input should be a valid string; quote it in YAML",
    ),
    (
        "instance-type-name-that-would-rewrite-the-pricing-csv",
        [
            (
                ("catalog",),
                {
                    "instanceTypes": [
                        {"name": "x,0.0001,\nfake", "gpuModel": "A100-SXM4-80GB", "gpuCount": 8, "hourlyPrice": 10}
                    ]
                },
            )
        ],
        "catalog.instanceTypes[0].name",
        "'x,0.0001,\\nfake' is not an instance or machine type name; allowed: at most 63 characters",
    ),
    ("version-with-a-trailing-newline", [(("kubernetesVersion",), "1.33\n")], "kubernetesVersion", "not a minor"),
    ("version-in-full-width-digits", [(("kubernetesVersion",), "1.\uff13\uff13")], "kubernetesVersion", "not a minor"),
    ("version-with-a-leading-zero", [(("kubernetesVersion",), "1.00")], "kubernetesVersion", "not a minor version"),
    (
        "duration-with-a-trailing-newline",
        [(("monitoring",), {"thresholds": {"strandedFor": "1h30m\n"}})],
        "monitoring.thresholds.strandedFor",
        "",
    ),
    ("yaml-null-shown-as-written", [(("nodePools", 0, "protect"), None)], "nodePools[0].protect", "null: Input"),
    (
        "other-cloud-section",
        [(("gcp",), {"project": "ml-project", "location": "us-central1"})],
        "gcp",
        "set, but cloud is 'aws'",
    ),
    (
        "mig-slice-replicas-1",
        [(("nodePools", 1, "sharing", "replicas"), 1)],
        "nodePools[1].sharing.replicas",
        "too small for time-slicing MIG slices; allowed: >= 2, or omit",
    ),
    ("non-string-key", [(("teams", 0, "quotas", 5), 1)], "teams[0].quotas", "key 5 is a number; allowed: string keys"),
]


@pytest.mark.parametrize(("mutations", "path", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule_reports_field_path(dev_data, mutations, path, words):
    for where, value in mutations:
        _set(dev_data, where, value)
    with pytest.raises(SpecError) as exc:
        parse_spec(dev_data)
    lines = [str(f) for f in exc.value.findings]
    hits = [line for line in lines if line.startswith(path + ":")]
    assert hits, f"no error at {path}; got {lines}"
    assert any(words in h for h in hits), f"{words!r} not in {hits}"


def test_all_errors_reported_at_once(dev_data):
    pool(dev_data, "gpu-train")["instanceType"] = "p9.huge"
    pool(dev_data, "gpu-dev")["sharing"]["replicas"] = 1
    tier(dev_data, "inference")["resource"] = "nvidia.com/gpu"
    team(dev_data, "production")["namespaces"] = ["research"]
    with pytest.raises(SpecError) as exc:
        parse_spec(dev_data)
    paths = {f.path for f in exc.value.findings}
    assert {
        f"{pool_path(dev_data, 'gpu-train')}.instanceType",
        f"{pool_path(dev_data, 'gpu-dev')}.sharing.replicas",
        f"{tier_path(dev_data, 'inference')}.resource",
        f"{team_path(dev_data, 'production')}.namespaces[0]",
    } <= paths


def test_custom_instance_type_and_price_override(dev_data):
    dev_data["catalog"] = {
        "instanceTypes": [{"name": "p5.4xlarge", "gpuModel": "H100-80GB", "gpuCount": 1, "hourlyPrice": 6.88}],
        "priceOverrides": {"p4de.24xlarge": 20.0},
        "discountPercent": 10,
    }
    pool(dev_data, "gpu-train")["instanceType"] = "p5.4xlarge"
    spec = parse_spec(dev_data)
    assert spec.hardware.instance("p5.4xlarge").hourly_usd == 6.88
    assert spec.hardware.instance("p4de.24xlarge").hourly_usd == 20.0
    assert spec.hardware.instance("p4d.24xlarge").hourly_usd == pytest.approx(21.957642 * 0.9)


def test_single_profile_mig_tier_defaults_resource(dev_data):
    pool(dev_data, "gpu-infer")["sharing"]["migLayout"] = {"1g.10gb": 7}
    dev_data["tiers"] = [t for t in dev_data["tiers"] if t["name"] != "finetune"]
    tier(dev_data, "inference").pop("resource")
    team(dev_data, "production")["quotas"] = {"inference": 4}
    spec = parse_spec(dev_data)
    assert spec.resource_of(spec.tiers_by_name["inference"]) == "nvidia.com/mig-1g.10gb"


def test_spec_is_frozen(dev_spec):
    with pytest.raises(Exception, match="frozen"):
        dev_spec.cluster_name = "other"


def test_default_priority_ladder_follows_sharing(dev_data):
    for t in dev_data["tiers"]:
        t.pop("priority")
    spec = parse_spec(dev_data)
    got = {t.name: spec.priority_of(t) for t in spec.tiers}
    assert got == {"train": 100000, "inference": 50000, "finetune": 49000, "dev": 10000, "ci": 1000}
    tier(dev_data, "dev")["priority"] = 7
    assert parse_spec(dev_data).priority_of(parse_spec(dev_data).tiers_by_name["dev"]) == 7


def test_mutating_admission_policy_needs_kubernetes_1_32(dev_data):
    dev_data["kubernetesVersion"] = "1.31"
    dev_data["admission"] = {"mutation": "mutating-admission-policy"}
    with pytest.raises(SpecError) as exc:
        parse_spec(dev_data)
    assert any(
        str(f).startswith("admission.mutation: mutating-admission-policy needs Kubernetes >= 1.32")
        for f in exc.value.findings
    )


def test_beta_mutating_admission_policy_warns_about_feature_gate(dev_data):
    from gpu_platform.validation import check_spec

    dev_data["kubernetesVersion"] = "1.34"
    dev_data["admission"] = {"mutation": "mutating-admission-policy"}
    warnings = [f for f in check_spec(parse_spec(dev_data)) if f.severity is Severity.WARNING]
    assert any(f.path == "admission.mutation" and "feature gate" in f.message for f in warnings)


def test_structural_and_cross_field_errors_come_together(dev_data):
    pool(dev_data, "gpu-train")["sharng"] = {"mode": "mig"}  # typo: structural
    pool(dev_data, "gpu-infer")["sharing"]["migLayout"] = {"1g.10gb": 8}  # placement: cross-field
    team(dev_data, "production")["namespaces"] = ["research"]  # ownership: cross-field
    with pytest.raises(SpecError) as exc:
        parse_spec(dev_data)
    paths = [f.path for f in exc.value.findings]
    assert paths[0] == f"{pool_path(dev_data, 'gpu-train')}.sharng"
    assert {
        f"{pool_path(dev_data, 'gpu-infer')}.sharing.migLayout",
        f"{team_path(dev_data, 'production')}.namespaces[0]",
    } <= set(paths)


def test_cross_field_errors_inside_a_broken_object_wait_for_its_fix(dev_data):
    team(dev_data, "research")["cohort"] = 5  # structural; the borrowing rule on the same team must not fire on a guess
    with pytest.raises(SpecError) as exc:
        parse_spec(dev_data)
    assert [f.path for f in exc.value.findings] == [f"{team_path(dev_data, 'research')}.cohort"]


def test_true_and_false_are_not_numbers(dev_data):
    """YAML's true / false in a number field are errors naming the field (pydantic alone reads them as 1 and 0:
    `maxSize: true` was a pool of one node, reported only as quotas the pool could not hold)."""
    pool(dev_data, "gpu-train")["maxSize"] = True
    pool(dev_data, "gpu-train")["minSize"] = False
    pool(dev_data, "gpu-infer")["sharing"]["migLayout"] = {"1g.10gb": True}
    team(dev_data, "production")["quotas"]["finetune"] = True
    dev_data["catalog"] = {"discountPercent": True, "priceOverrides": {"p4d.24xlarge": False}}
    dev_data["monitoring"]["thresholds"] = {"strandedSmActive": True}
    with pytest.raises(SpecError) as exc:
        parse_spec(dev_data)
    by_path = {f.path: f.message for f in exc.value.findings}
    wanted = {
        f"{pool_path(dev_data, 'gpu-train')}.maxSize": "true",
        f"{pool_path(dev_data, 'gpu-train')}.minSize": "false",
        f"{pool_path(dev_data, 'gpu-infer')}.sharing.migLayout.1g.10gb": "true",
        f"{team_path(dev_data, 'production')}.quotas.finetune": "true",
        "catalog.discountPercent": "true",
        "catalog.priceOverrides.p4d.24xlarge": "false",
        "monitoring.thresholds.strandedSmActive": "true",
    }
    for path, shown in wanted.items():
        assert by_path.get(path, "").startswith(f"{shown}: not a number; allowed: a number"), (path, by_path)


def test_every_number_field_refuses_true_and_false():
    """Each int and float field of the spec's models, and of the policy pack's config, goes through `not_bool` (or is
    strict): a field added later as a bare `int` would read `true` as 1."""
    import typing

    from pydantic import BaseModel, BeforeValidator

    from gpu_platform.policy.config import PolicyConfig
    from gpu_platform.spec import PlatformSpec, not_bool

    def guarded(annotation: typing.Any) -> bool:
        return any(
            isinstance(m, BeforeValidator) and m.func is not_bool for m in getattr(annotation, "__metadata__", ())
        )

    loose: list[str] = []
    seen: set[type] = set()

    def walk(model: type[BaseModel], where: str) -> None:
        if model in seen:
            return
        seen.add(model)
        for name, info in model.model_fields.items():
            stack = [info.annotation]
            if info.metadata and info.annotation in (int, float):
                stack = [typing.Annotated[info.annotation, *info.metadata]]
            while stack:
                ann = stack.pop()
                origin = typing.get_origin(ann)
                if origin is typing.Annotated:
                    base = typing.get_args(ann)[0]
                    if (
                        base in (int, float)
                        and not guarded(ann)
                        and not any(getattr(m, "strict", False) for m in ann.__metadata__)
                    ):
                        loose.append(f"{where}.{name}")
                    elif base not in (int, float):
                        stack.append(base)
                elif ann in (int, float):
                    loose.append(f"{where}.{name}")
                elif isinstance(ann, type) and issubclass(ann, BaseModel):
                    walk(ann, ann.__name__)
                else:
                    stack.extend(a for a in typing.get_args(ann) if a is not type(None))

    walk(PlatformSpec, "PlatformSpec")
    walk(PolicyConfig, "PolicyConfig")
    assert len(seen) > 20
    assert not loose, loose


def test_a_layout_whose_most_that_fits_is_the_balanced_one_is_suggested_once(dev_data):
    dev_data["nodePools"][1]["sharing"]["migLayout"] = {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 3}
    with pytest.raises(SpecError) as info:
        parse_spec(dev_data)
    [message] = [f.message for f in info.value.findings if f.path == "nodePools[1].sharing.migLayout"]
    assert message.endswith("e.g. {'3g.40gb': 1, '2g.20gb': 1, '1g.10gb': 2} (the most of this one that fits)")


def test_the_suggested_layout_always_fits_and_keeps_to_the_given_counts():
    import itertools

    from gpu_platform.catalog import MIG_CAPABLE_GPUS, layout_fits, profiles_for
    from gpu_platform.validation import _most_that_fits

    for model in MIG_CAPABLE_GPUS:
        profiles = profiles_for(model)
        for pair in itertools.combinations(profiles, 2):
            for counts in itertools.product(range(0, 5), repeat=2):
                layout = {k: n for k, n in zip(pair, counts, strict=True)}
                if not any(counts) or layout_fits(model, layout):
                    continue
                got = _most_that_fits(model, layout, profiles)
                assert got and layout_fits(model, got), (model, layout, got)
                assert all(0 < n <= layout[k] for k, n in got.items()), (model, layout, got)


@pytest.mark.parametrize("layout", [None, {"3g.20gb": 1}, {}])
def test_a_broken_mig_layout_is_one_error_not_one_per_tier(dev_data, layout):
    sharing = dev_data["nodePools"][1]["sharing"]
    if layout is None:
        sharing.pop("migLayout")
    else:
        sharing["migLayout"] = layout
    with pytest.raises(SpecError) as info:
        parse_spec(dev_data)
    paths = [f.path for f in info.value.findings]
    assert len(paths) == 1 and paths[0].startswith("nodePools[1].sharing.migLayout"), paths
