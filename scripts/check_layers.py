#!/usr/bin/env python3
"""Checks that every folder of the product depends only downwards (README, "Layout"):

    support <- driver <- {jit, inspect} <- tune <- blas,  tune <- mpi      (the components)
    apps: the public headers of core, tune and blas, support/, and apps/ itself
    tools: everything public, apps/, support/, and tools/ itself
    python: the public headers of core and tune, and python/ itself (the extension module)

Each file belongs to a layer by its folder: runtime/core/<layer>/, runtime/<layer>/, apps/*/,
tools/ (with tools/mpi/), python/ (with python/src/). A public header include/ptxrt/<component>/X.hpp belongs to the layer
whose folder holds X.cpp (ptxrt::core's headers without one to "core", above jit and inspect); the
umbrellas ptxrt/core.hpp, ptxrt/tune.hpp, ptxrt/blas.hpp and ptxrt/mpi.hpp to their component. An
internal header is included by its layer's path ("driver/kernel_state.hpp"). Prints every include
that points up, sideways, or into another component's internals where that is not allowed, and
exits 1 if there is one.
    scripts/check_layers.py [SOURCE_DIR]
"""
import pathlib
import re
import sys

CORE_LAYERS = ("support", "driver", "jit", "inspect")
RUNTIME_LAYERS = ("tune", "blas", "mpi")

# What a layer may include: the layers below it and itself.
ALLOWED = {
    "support": {"support"},
    "driver": {"driver", "support"},
    "jit": {"jit", "driver", "support"},
    "inspect": {"inspect", "driver", "support"},
    "core": {"core", "jit", "inspect", "driver", "support"},
    "tune": {"tune", "core", "jit", "inspect", "driver", "support"},
    "blas": {"blas", "tune", "core", "jit", "inspect", "driver", "support"},
    "mpi": {"mpi", "tune", "core", "jit", "inspect", "driver", "support"},
    "apps": {"apps", "blas", "tune", "core", "jit", "inspect", "driver", "support"},
    "tools": {"tools", "apps", "mpi", "blas", "tune", "core", "jit", "inspect", "driver", "support"},
    "python": {"python", "tune", "core", "jit", "inspect", "driver", "support"},
}
# The internal headers an application or the CLI may include: besides their own, only support/,
# the foundation through which everything reads files, echoes input and starts processes.
INTERNALS_ALLOWED = {"apps": {"apps", "support"}, "tools": {"tools", "apps", "support"},
                     "python": {"python"}}
UMBRELLAS = {"ptxrt/core.hpp": "core", "ptxrt/ptxrt.hpp": "core", "ptxrt/tune.hpp": "tune",
             "ptxrt/blas.hpp": "blas", "ptxrt/mpi.hpp": "mpi", "ptxrt/export.hpp": "support"}


class Layout:
    def __init__(self, root: pathlib.Path):
        self.root = root
        self.folders = {}  # folder -> layer
        for layer in CORE_LAYERS:
            self.folders[root / "runtime" / "core" / layer] = layer
        for layer in RUNTIME_LAYERS:
            self.folders[root / "runtime" / layer] = layer
        for folder in (root / "apps").glob("*/"):
            self.folders[folder] = "apps"
        self.folders[root / "tools"] = "tools"
        self.folders[root / "tools" / "mpi"] = "tools"
        self.folders[root / "python"] = "python"
        self.folders[root / "python" / "src"] = "python"
        self.layer_of_stem = {}
        for folder, layer in self.folders.items():
            if layer in CORE_LAYERS:
                for source in folder.glob("*.cpp"):
                    self.layer_of_stem[source.stem] = layer

    def unknown_folders(self) -> list:
        present = set(self.folders)
        candidates = list((self.root / "runtime" / "core").glob("*/"))
        candidates += [path for path in (self.root / "runtime").glob("*/") if path.name != "core"]
        candidates += list((self.root / "apps").glob("*/"))
        return sorted(str(path.relative_to(self.root)) for path in candidates if path not in present)

    def public_layer(self, path: str):
        """The layer of a public header by its include path ("ptxrt/core/kernel.hpp")."""
        if path in UMBRELLAS:
            return UMBRELLAS[path]
        parts = path.split("/")
        if len(parts) != 3 or parts[0] != "ptxrt":
            return None
        component, stem = parts[1], pathlib.PurePosixPath(parts[2]).stem
        if component == "core":
            return self.layer_of_stem.get(stem, "core")
        return component if component in RUNTIME_LAYERS else None

    def included(self, path: str, includer_layer: str):
        """(layer, is_public) of an include as written, or None for one outside the product."""
        if path.startswith("ptxrt/"):
            layer = self.public_layer(path)
            return (layer, True) if layer else None
        first = path.split("/")[0]
        if "/" not in path:
            return (includer_layer, False)  # a header beside the includer
        if first in CORE_LAYERS or first in RUNTIME_LAYERS:
            return (first, False)
        if first in ("apps", "tools"):
            return (first, False)
        return None

    def files(self):
        for folder, layer in sorted(self.folders.items()):
            for path in sorted(folder.glob("*.[ch]pp")):
                yield path, layer
        for path in sorted((self.root / "include" / "ptxrt").glob("**/*.hpp")):
            layer = self.public_layer(path.relative_to(self.root / "include").as_posix())
            if layer is None:
                raise ValueError(f"{path.relative_to(self.root)} belongs to no component")
            yield path, layer


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    layout = Layout(root)
    unknown = layout.unknown_folders()
    if unknown:
        print(f"check_layers: {unknown[0]}/ is not a known layer folder")
        return 1
    violations = []
    count = 0
    for path, layer in layout.files():
        count += 1
        for included in re.findall(r'^#include "([^"]+)"', path.read_text(), re.MULTILINE):
            found = layout.included(included, layer)
            if found is None:
                continue
            other, public = found
            if other not in ALLOWED[layer]:
                violations.append(f"{path.relative_to(root)}: {layer} includes {included} ({other})")
            elif not public and other not in INTERNALS_ALLOWED.get(layer, ALLOWED[layer]):
                violations.append(
                    f"{path.relative_to(root)}: {layer} includes {included}, internal to {other}")
    for violation in violations:
        print(violation)
    print(f"check_layers: {count} files, {len(violations)} includes against the layering")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
