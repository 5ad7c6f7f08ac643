"""The old name of benchmarks/kernels_gpu.py (it runs on any GPU): runs it with the same arguments."""

import runpy
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.argv[0] = str(Path(__file__).with_name("kernels_gpu.py"))
    runpy.run_path(sys.argv[0], run_name="__main__")
