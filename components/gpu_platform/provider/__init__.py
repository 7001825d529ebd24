"""The library as a Pulumi component package: `GpuPlatform` for every Pulumi language.

`types` mirrors the spec as TypedDicts the SDK's component analyzer reads (generated from `spec.py` by `codegen`),
`convert` turns the inputs a program sends back into the spec's wire form, `component` is the hosted
`GpuPlatform`, and `python -m gpu_platform` (what `PulumiPlugin.yaml` runs) serves it to the Pulumi engine.
"""

__all__: list[str] = []  # the plugin is served by `python -m gpu_platform`; nothing is imported from the package itself
