"""`python -m gpu_platform <engine address>`: the Pulumi component provider, as the engine starts it.

`PulumiPlugin.yaml` at the repository root makes the project a Python plugin; with no `__main__.py` beside it the
Python language host runs `python -m pulumi.run.plugin gpu-platform` (pulumi/pulumi v3.259.0,
sdk/python/cmd/pulumi-language-python/main.go `RunPlugin`), which imports `gpu_platform` and, since the package
root exports no component class (it imports no Pulumi SDK), runs this module (sdk/python/lib/pulumi/run/plugin).

Run by hand in a terminal with no engine address, it says what it is and points at the command line instead of
starting a provider that waits, silently, for an engine that never comes.
"""

import sys

from gpu_platform.provider.serve import serve

if __name__ == "__main__":
    if len(sys.argv) < 2 and sys.stdin is not None and sys.stdin.isatty():
        sys.stderr.write(
            "python -m gpu_platform is the Pulumi component provider: the Pulumi engine starts it with the engine's "
            "address. The command line is `gpu-platform` (`gpu-platform --help`).\n"
        )
        sys.exit(2)
    serve()
