"""The eval report's line format, shared by the driver that writes it and the host that reads it.

Each line the driver sends is `TAG KIND TEXT` (no spaces between): KIND one byte (`=` an outcome as it is
recorded, `!` a finding, `{` the report at the end), and TAG the keyed BLAKE2 digest of the line's number in
the run and of KIND TEXT, with a key that came over the socket only, in the run's settings. Code under test
runs in the driver's process and can write to the socket's descriptor, or put a socket of its own in its
place and pass on what it likes; without the key it can make no line the host accepts, and it cannot drop,
repeat or reorder the driver's lines unseen, since each line's number is in its tag.
"""

import hashlib

TAG_SIZE = 32  # hex digits


def tag(key, number, line, _blake2b=hashlib.blake2b):
    """The tag of the run's line `number` (from 0) whose kind and text are `line`, for `key` (bytes)."""
    return _blake2b(number.to_bytes(8, "big") + line, key=key, digest_size=TAG_SIZE // 2).hexdigest().encode()
