#!/usr/bin/env python3
"""Checks that the runtime's layers depend only downwards (README, "Layout"):

    blas -> tune -> jit -> driver,  tune -> inspect -> driver,  mpi -> tune,  every layer -> support

A public header include/ptxrt/<component>/X.hpp belongs to the layer whose folder holds X.cpp;
an internal header is included by its layer-qualified path ("driver/kernel_state.hpp"). Prints
every include that points up or sideways and exits 1 if there is one.
    scripts/check_layers.py [SOURCE_DIR]
"""
import pathlib
import re
import sys

ALLOWED = {
    "support": {"support"},
    "driver": {"driver", "support"},
    "inspect": {"inspect", "driver", "support"},
    "jit": {"jit", "driver", "support"},
    "tune": {"tune", "jit", "inspect", "driver", "support"},
    "blas": {"blas", "tune", "jit", "inspect", "driver", "support"},
    "mpi": {"mpi", "tune", "jit", "inspect", "driver", "support"},
}


def layer_folders(root: pathlib.Path) -> list:
    """runtime/core/<layer>/ and runtime/<layer>/: the folders named after a layer."""
    core = root / "runtime" / "core"
    return sorted(core.glob("*/")) + sorted(path for path in root.glob("runtime/*/") if path != core)


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    folders = layer_folders(root)
    unknown = sorted({folder.name for folder in folders} - ALLOWED.keys())
    if unknown:
        print(f"check_layers: {unknown[0]}/ is not a known layer ({', '.join(ALLOWED)})")
        return 1
    layer_of = {}
    layer_of_stem = {}
    runtime_files = []
    for folder in folders:
        for source in folder.glob("*.cpp"):
            layer_of_stem[source.stem] = folder.name
        for header in folder.glob("*.hpp"):
            layer_of[f"{folder.name}/{header.name}"] = folder.name
        runtime_files += sorted(folder.glob("*.[ch]pp"))
    public_headers = sorted(root.glob("include/ptxrt/**/*.hpp"))
    for header in public_headers:
        if header.stem in layer_of_stem:
            layer_of[header.relative_to(root / "include").as_posix()] = layer_of_stem[header.stem]
    files = runtime_files + public_headers
    violations = []
    for path in files:
        if path.parent in folders:
            layer = path.parent.name
        else:
            layer = layer_of.get(path.relative_to(root / "include").as_posix())
        if layer is None:
            continue  # umbrella and header-only helpers belong to no layer
        for included in re.findall(r'^#include "([^"]+)"', path.read_text(), re.MULTILINE):
            other = layer_of.get(included)
            if other is not None and other not in ALLOWED[layer]:
                violations.append(f"{path.relative_to(root)}: {layer} includes {included} ({other})")
    for violation in violations:
        print(violation)
    print(f"check_layers: {len(files)} files, {len(violations)} includes against the layering")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
