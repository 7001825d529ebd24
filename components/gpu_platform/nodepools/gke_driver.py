"""Pure render of Google's NVIDIA driver installer DaemonSet for GKE pools on the gpu-operator stack.

With `gcp.gpuStack: gpu-operator` the pools set `gpuDriverVersion: INSTALLATION_DISABLED` and the operator's own
driver is off, so without this DaemonSet a node has no driver. NVIDIA's GKE guide (NVIDIA/cloud-native-docs
@ 52dcb7b8 `gpu-operator/google-gke.rst`, "Using the Google Driver Installer") pairs exactly these settings with
Google's installer, which writes the driver to /home/kubernetes/bin/nvidia, the operator's `driverInstallDir`.
The object below is GoogleCloudPlatform/container-engine-accelerators @ 992db812
`nvidia-driver-installer/cos/daemonset-preloaded.yaml` (COS nodes; its image is preloaded by GKE), unchanged but
for our labels. Its affinity selects nodes with `cloud.google.com/gke-accelerator` and without
`cloud.google.com/gke-gpu-driver-version` (GKE sets that label only when it installs the driver itself), and it
tolerates every taint, so it reaches the pools' tainted nodes. Ubuntu node images need Google's Ubuntu installer
instead (validation warns).
"""

from __future__ import annotations

from typing import Any

from ..contract import MANAGED_BY_LABEL, PLATFORM_NAME, SYSTEM_NAMESPACE
from ..spec import Cloud, GkeGpuStack, PlatformSpec

__all__ = ["needs_driver_installer", "render_driver_installer"]

DRIVER_INSTALLER_SOURCE = (
    "GoogleCloudPlatform/container-engine-accelerators@992db81257553607f1477945f1b3219632991829"
    ":nvidia-driver-installer/cos/daemonset-preloaded.yaml"
)
_APP = "nvidia-driver-installer"
_NVIDIA_DIR = "/home/kubernetes/bin/nvidia"
_PARTITION_IMAGE = (
    "gcr.io/gke-release/nvidia-partition-gpu@sha256:de12f85ebfb4fb6c1893cd30c23aab662a72fa0448f97ef74fccb82d7522ef17"
)
_PAUSE_IMAGE = "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830"
_INSTALL_SCRIPT = """echo "Checking for existing GPU driver modules"
if lsmod | grep nvidia; then
  echo "GPU driver is already installed, the installed version may or may not be the driver version being tried to install, skipping installation"
  exit 0
else
  echo "No GPU driver module detected, installing now"
  /cos-gpu-installer install || exit 1
fi
"""  # noqa: E501 - the script of GKE's installer DaemonSet, kept verbatim (its long echo line included)


def needs_driver_installer(spec: PlatformSpec) -> bool:
    """True on GKE with the gpu-operator stack, unless the spec opts out (gcp.driverInstaller: false)."""
    return (
        spec.cloud == Cloud.GCP
        and spec.gcp is not None
        and spec.gcp.gpu_stack == GkeGpuStack.GPU_OPERATOR
        and spec.gcp.driver_installer
    )


def _volumes() -> list[dict[str, Any]]:
    paths = {
        "dev": "/dev",
        "vulkan-icd-mount": f"{_NVIDIA_DIR}/vulkan/icd.d",
        "nvidia-install-dir-host": _NVIDIA_DIR,
        "root-mount": "/",
        "cos-tools": "/var/lib/cos-tools",
        "nvidia-config": "/etc/nvidia",
    }
    return [{"name": n, "hostPath": {"path": p}} for n, p in paths.items()]


def _env(pairs: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in pairs.items()]


def _installer() -> dict[str, Any]:
    mounts = {
        "nvidia-install-dir-host": "/usr/local/nvidia",
        "vulkan-icd-mount": "/etc/vulkan/icd.d",
        "dev": "/dev",
        "root-mount": "/root",
        "cos-tools": "/build/cos-tools",
    }
    return {
        "image": "cos-nvidia-installer:fixed",
        "imagePullPolicy": "Never",
        "name": "nvidia-driver-installer",
        "resources": {"requests": {"cpu": "150m"}},
        "securityContext": {"privileged": True},
        "env": _env(
            {
                "NVIDIA_INSTALL_DIR_HOST": _NVIDIA_DIR,
                "NVIDIA_INSTALL_DIR_CONTAINER": "/usr/local/nvidia",
                "VULKAN_ICD_DIR_HOST": f"{_NVIDIA_DIR}/vulkan/icd.d",
                "VULKAN_ICD_DIR_CONTAINER": "/etc/vulkan/icd.d",
                "ROOT_MOUNT_DIR": "/root",
                "COS_TOOLS_DIR_HOST": "/var/lib/cos-tools",
                "COS_TOOLS_DIR_CONTAINER": "/build/cos-tools",
            }
        ),
        "volumeMounts": [{"name": n, "mountPath": p} for n, p in mounts.items()],
        "command": ["bash", "-c", _INSTALL_SCRIPT],
    }


def _partitioner() -> dict[str, Any]:
    mounts = {"nvidia-install-dir-host": "/usr/local/nvidia", "dev": "/dev", "nvidia-config": "/etc/nvidia"}
    return {
        "image": _PARTITION_IMAGE,
        "name": "partition-gpus",
        "env": _env({"LD_LIBRARY_PATH": "/usr/local/nvidia/lib64"}),
        "resources": {"requests": {"cpu": "150m"}},
        "securityContext": {"privileged": True},
        "volumeMounts": [{"name": n, "mountPath": p} for n, p in mounts.items()],
    }


def _affinity() -> dict[str, Any]:
    exprs = [
        {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"},
        {"key": "cloud.google.com/gke-gpu-driver-version", "operator": "DoesNotExist"},
        {"key": "cloud.google.com/gke-confidential-nodes-instance-type", "operator": "DoesNotExist"},
    ]
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}
        }
    }


def render_driver_installer() -> dict[str, Any]:
    """Google's COS driver installer DaemonSet (kube-system), as published upstream."""
    labels = {"k8s-app": _APP}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": _APP,
            "namespace": SYSTEM_NAMESPACE,
            "labels": {**labels, MANAGED_BY_LABEL: PLATFORM_NAME},
            "annotations": {"gpu-platform/source": DRIVER_INSTALLER_SOURCE},
        },
        "spec": {
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": {"name": _APP, **labels}},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    "affinity": _affinity(),
                    "tolerations": [{"operator": "Exists"}],
                    "hostNetwork": True,
                    "hostPID": True,
                    "volumes": _volumes(),
                    "initContainers": [_installer(), _partitioner()],
                    "containers": [{"image": _PAUSE_IMAGE, "name": "pause"}],
                },
            },
        },
    }
