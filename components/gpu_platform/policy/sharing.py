"""Stack policy: every GPU pool's sharing labels name configs that exist in the stack's GPU Operator release."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import yaml

from ..contract import DEVICE_PLUGIN_CONFIG_LABEL, MIG_CONFIG_LABEL
from ..gpu_operator.render import CHART as OPERATOR_CHART
from ..inputs import MAX_DOCUMENT_DEPTH, InputLimitError, load_yaml
from .config import config_of
from .props import POOL_TYPES, dig, gpu_pool, mapping

if TYPE_CHECKING:  # the engine's argument types, for annotations only: the checks import no policy SDK
    from pulumi_policy import StackValidationArgs

__all__ = ["check_sharing_configs_exist"]

HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
Report = Callable[..., None]
# mig-manager generates these from the hardware when no custom config is given (gpu-operator v26 values comment).
_GENERATED_MIG_PREFIX = "all-"


def _is_operator(r: Any) -> bool:
    return (
        r.resource_type == HELM_RELEASE and str(dig(r.props, "chart", default="")).rsplit("/", 1)[-1] == OPERATOR_CHART
    )


def _config_map_data(resources: list[Any], name: str, namespace: str | None) -> dict[str, Any] | None:
    for r in resources:
        if r.resource_type != CONFIG_MAP or dig(r.props, "metadata", "name") != name:
            continue
        ns = dig(r.props, "metadata", "namespace")
        if namespace is None or ns in (None, namespace):
            return dict(mapping(dig(r.props, "data", default={})))
    return None


def _section_data(resources: list[Any], release: Any, section: str) -> tuple[str, dict[str, Any] | None]:
    cfg = dig(release.props, "values", section, "config", default={})
    name = str(dig(cfg, "name", default=""))
    inline = mapping(dig(cfg, "data", default={}))
    if inline and dig(cfg, "create", default=False):
        return name, dict(inline)
    if not name:
        return name, None
    return name, _config_map_data(resources, name, dig(release.props, "namespace"))


def _mig_names(data: dict[str, Any] | None) -> set[str] | None:
    if data is None:
        return None
    text = data.get("config.yaml")
    try:
        parsed = load_yaml(text, max_depth=MAX_DOCUMENT_DEPTH) if isinstance(text, str) else None
    except (yaml.YAMLError, InputLimitError):
        parsed = None
    return set(mapping(mapping(parsed).get("mig-configs")))


def operator_configs(resources: list[Any], release: Any) -> tuple[str, set[str] | None, str, set[str] | None]:
    """(device-plugin ConfigMap name, its keys, mig-manager ConfigMap name, its mig-config names); None = absent."""
    dp_name, dp = _section_data(resources, release, "devicePlugin")
    mig_name, mig = _section_data(resources, release, "migManager")
    return dp_name, (set(dp) if dp is not None else None), mig_name, _mig_names(mig)


def _pool_gaps(labels: Any, rel: str, configs: tuple[str, set[str] | None, str, set[str] | None]) -> list[str]:
    dp_name, dp_keys, mig_name, mig_keys = configs
    gaps = []
    dp = labels.get(DEVICE_PLUGIN_CONFIG_LABEL)
    if dp and dp_keys is None:
        gaps.append(
            f"{DEVICE_PLUGIN_CONFIG_LABEL}={dp} but release {rel!r} has no device-plugin config "
            f"(ConfigMap {dp_name or '<unset>'!r} not found; set devicePlugin.config)"
        )
    elif dp and dp_keys is not None and dp not in dp_keys:
        gaps.append(
            f"{DEVICE_PLUGIN_CONFIG_LABEL}={dp} is not an entry of ConfigMap {dp_name!r} "
            f"(has: {', '.join(sorted(dp_keys)) or 'nothing'})"
        )
    mig = labels.get(MIG_CONFIG_LABEL)
    if mig and not (mig_keys is None and str(mig).startswith(_GENERATED_MIG_PREFIX)):
        if mig_keys is None:
            gaps.append(
                f"{MIG_CONFIG_LABEL}={mig} but release {rel!r} has no custom mig-manager config "
                f"(only the generated all-* layouts exist; set migManager.config)"
            )
        elif mig not in mig_keys:
            gaps.append(
                f"{MIG_CONFIG_LABEL}={mig} is not a mig-configs entry of ConfigMap {mig_name!r} "
                f"(has: {', '.join(sorted(mig_keys)) or 'nothing'})"
            )
    return gaps


def check_sharing_configs_exist(args: StackValidationArgs, report_violation: Report) -> None:
    """The device-plugin and MIG config labels of every GPU pool name entries of the GPU Operator's configs."""
    config_of(args)
    resources = list(args.resources)
    pools = [
        (r, p)
        for r in resources
        if r.resource_type in POOL_TYPES and (p := gpu_pool(r.resource_type, r.name, r.props)) is not None
    ]
    if not pools:
        args.not_applicable("no GPU node pools in this stack")
    release = next((r for r in resources if _is_operator(r)), None)
    if release is None:
        args.not_applicable("no GPU Operator Helm release in this stack")
        return  # not reached: not_applicable raises
    rel = str(dig(release.props, "name", default=release.name))
    configs = operator_configs(resources, release)
    for r, pool in pools:
        gaps = _pool_gaps(pool.labels, rel, configs)
        if gaps:
            report_violation(
                f"GPU node pool {pool.name!r} selects sharing configs that do not exist: {'; '.join(gaps)}.", r.urn
            )
