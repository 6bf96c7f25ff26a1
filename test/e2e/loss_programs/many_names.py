"""Defines COUNT distinct functions and calls each once; each makes one
native call, so each interns its own name."""
import sys

import numpy as np

count = int(sys.argv[1])
namespace = {"a": np.ones(2)}
exec("\n".join(f"def f{i}():\n    return a.dot(a)" for i in range(count)), namespace)
for i in range(count):
    namespace[f"f{i}"]()
