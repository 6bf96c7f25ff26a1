"""A flat script whose loop calls native code from many places, as
CleanRL-style scripts do: twelve call sites of extension-module functions
(_json's and _hashlib's C functions: outside the interpreter on Debian's
and pyenv's builds alike) on twelve lines of one module-level loop, with
Python work between them. Each line's native calls must be counted on that
line, however many places the code calls from.

  many_call_sites.py STEPS

Prints the number of steps and a checksum of what the calls returned.
"""
import sys

import _hashlib
import _json

steps = int(sys.argv[1])
text = "rl-step"
data = b"observation"
checksum = 0
for step in range(steps):
    checksum += len(_json.encode_basestring_ascii(text))  # site 1
    scaled = step * 3 + 1
    checksum += len(_json.encode_basestring(text))  # site 2
    scaled ^= checksum & 0xFF
    checksum += _hashlib.openssl_md5(data).digest()[0]  # site 3
    scaled += step % 7
    checksum += _hashlib.openssl_sha1(data).digest()[0]  # site 4
    scaled -= step % 5
    checksum += len(_json.encode_basestring_ascii(text + "a"))  # site 5
    scaled *= 1
    checksum += _hashlib.openssl_sha256(data).digest()[0]  # site 6
    scaled += 2
    checksum += len(_json.encode_basestring(text + "b"))  # site 7
    scaled -= 2
    checksum += _hashlib.openssl_sha224(data).digest()[0]  # site 8
    scaled ^= 3
    checksum += len(_json.encode_basestring_ascii(text + "c"))  # site 9
    scaled ^= 3
    checksum += _hashlib.openssl_sha512(data).digest()[0]  # site 10
    scaled += step & 1
    checksum += len(_json.encode_basestring(text + "d"))  # site 11
    scaled -= step & 1
    checksum += _hashlib.openssl_sha384(data).digest()[0]  # site 12
    checksum = (checksum + scaled) % 1_000_003
print(steps, checksum)
