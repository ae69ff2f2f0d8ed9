"""python -m ptxrt: the ptxrt CLI that came with this package (ptxrt --help lists its commands)."""
import os
import shutil
import sys
from pathlib import Path


def cli_path() -> str:
    bundled = Path(__file__).with_name("bin") / "ptxrt"
    if bundled.is_file():
        return str(bundled)
    on_path = shutil.which("ptxrt")
    if on_path:
        return on_path
    sys.exit("python -m ptxrt: this installation has no CLI (it was built without CLI11: install "
             "it, Debian's libcli11-dev, and pip install ptxrt again), and none is on PATH")


def main() -> None:
    path = cli_path()
    os.execv(path, [path, *sys.argv[1:]])


if __name__ == "__main__":
    main()
