"""`python3 -m trident ARGS...` runs the trident command line."""
import os
import sys

from . import binary

if __name__ == "__main__":
    exe = binary()
    os.execv(exe, [exe] + sys.argv[1:])
