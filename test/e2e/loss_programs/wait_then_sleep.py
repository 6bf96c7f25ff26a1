"""Writes its pid to FILE, then sleeps (until killed)."""
import os
import sys
import time

with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(120)
