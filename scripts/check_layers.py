#!/usr/bin/env python3
"""Checks that the runtime's layers depend only downwards (README, "Layout"):

    blas -> tune -> jit -> driver,  tune -> inspect -> driver,  every layer -> support

A public header include/ptxrt/X.hpp belongs to the layer whose folder holds runtime/<layer>/X.cpp;
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
}


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    layer_of = {}
    for source in root.glob("runtime/*/*.cpp"):
        layer_of[f"ptxrt/{source.stem}.hpp"] = source.parent.name
    for header in root.glob("runtime/*/*.hpp"):
        layer_of[f"{header.parent.name}/{header.name}"] = header.parent.name
    unknown = sorted({path.parent.name for path in root.glob("runtime/*/*")} - ALLOWED.keys())
    if unknown:
        print(f"check_layers: runtime/{unknown[0]}/ is not a known layer ({', '.join(ALLOWED)})")
        return 1
    files = sorted(root.glob("runtime/*/*.[ch]pp")) + sorted(root.glob("include/ptxrt/*.hpp"))
    violations = []
    for path in files:
        if path.parts[-3] == "runtime":
            layer = path.parent.name
        else:
            layer = layer_of.get(f"ptxrt/{path.name}")
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
