"""The component package's schema: what GetSchema returns, committed as `schema.json` (`make schema`)."""

import json
import sys
from typing import Any

from ..options import PACKAGE
from .component import SpecComponentProvider
from .serve import COMPONENTS, package_version

__all__ = ["package_schema", "schema_text"]


def package_schema() -> dict[str, Any]:
    """The schema the SDK's analyzer infers from the hosted components, as the provider serves it."""
    schema = SpecComponentProvider(COMPONENTS, PACKAGE, None, package_version()).schema
    if schema is None:
        raise RuntimeError("the component provider inferred no schema")
    data: dict[str, Any] = json.loads(schema)
    return data


def schema_text() -> str:
    """`package_schema()` as committed: indented JSON with a final newline."""
    return json.dumps(package_schema(), indent=2) + "\n"


if __name__ == "__main__":  # pragma: no cover
    sys.stdout.write(schema_text())
