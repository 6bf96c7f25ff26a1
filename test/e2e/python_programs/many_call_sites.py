"""A flat script whose loop calls native code from many places, as
CleanRL-style scripts do: twelve call sites of extension-module functions
(_hashlib's C functions, outside the interpreter in Debian's and pyenv's
builds; _json's and math's are built into some, Debian's 3.14 for one,
and are then the interpreter's own time) on twelve lines of one
module-level loop, with Python work between them. Each line's native
calls must be counted on that line, however many places the code calls
from.

  many_call_sites.py STEPS

Prints the number of steps and a checksum of what the calls returned.
"""
import sys

import _hashlib

steps = int(sys.argv[1])
text = "rl-step"
data = b"observation"
checksum = 0
for step in range(steps):
    checksum += _hashlib.compare_digest(text, "rl-step")  # site 1
    scaled = step * 3 + 1
    checksum += _hashlib.compare_digest(text, "rl-step")  # site 2
    scaled ^= checksum & 0xFF
    checksum += _hashlib.openssl_md5(data).digest()[0]  # site 3
    scaled += step % 7
    checksum += _hashlib.openssl_sha1(data).digest()[0]  # site 4
    scaled -= step % 5
    checksum += _hashlib.compare_digest(text + "a", "rl-step")  # site 5
    scaled *= 1
    checksum += _hashlib.openssl_sha256(data).digest()[0]  # site 6
    scaled += 2
    checksum += _hashlib.compare_digest(text + "b", "rl-step")  # site 7
    scaled -= 2
    checksum += _hashlib.openssl_sha224(data).digest()[0]  # site 8
    scaled ^= 3
    checksum += _hashlib.compare_digest(text + "c", "rl-step")  # site 9
    scaled ^= 3
    checksum += _hashlib.openssl_sha512(data).digest()[0]  # site 10
    scaled += step & 1
    checksum += _hashlib.compare_digest(text + "d", "rl-step")  # site 11
    scaled -= step & 1
    checksum += _hashlib.openssl_sha384(data).digest()[0]  # site 12
    checksum = (checksum + scaled) % 1_000_003
print(steps, checksum)
