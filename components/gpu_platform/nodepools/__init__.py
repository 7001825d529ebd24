"""GPU node pools: pure render functions (`render`) and one Pulumi component per cloud (`aws`, `gcp`)."""

__all__: list[str] = []
