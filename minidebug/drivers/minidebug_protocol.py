"""The messages the host and the drivers exchange, defined once: both sides import this module (the drivers
by name, as they run in the task's interpreter).

The eval report's line format, shared by the driver that writes it and the host that reads it.

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


# The control channel between the host and a warm interpreter (see minidebug_eval.serve): a socket pair, one
# message per line, ASCII words separated by spaces.
# The interpreter says:
READY = b"ready"  # `ready`: it imported what it imports ahead and waits for a request
FRESH = b"fresh"  # `fresh REASON`: it cannot fork runs (the host then runs them fresh)
PID = b"pid"  # `pid N`: the run or session it forked (its pid in the interpreter's namespace)
EXIT = b"exit"  # `exit N CODE`, or `exit N CODE unclean`: the child ended (and whether what it left was ended)
# The host asks:
RUN = b"run"  # `run`, with the report socket and the output pipe as descriptors: one eval run
FORK = b"fork"  # `fork {json}`, with one descriptor: a program of minidebug_forked's (a pdb session, a probe)
INTERRUPT = b"int"  # to a forked pdb session: SIGINT to its process group (Ctrl-C)
KILL = b"kill"  # to a forked pdb session: SIGKILL, and the interpreter accounts for it


def message(word, *fields):
    """One control line: `word` and its fields (str, int or bytes), with its newline."""
    parts = [word] + [field if isinstance(field, bytes) else str(field).encode() for field in fields]
    return b" ".join(parts) + b"\n"


_ESCAPES = {code: "\\u%04x" % code for code in range(32)}
_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\", ord("\n"): "\\n", ord("\t"): "\\t"})
_INFINITY = float("inf")


def dumps(value, _escapes=_ESCAPES, _translate=str.translate, _join=str.join, _int=int.__repr__,
          _float=float.__repr__, _to_float=float.__float__, _type=type, _subclass=issubclass, _reversed=reversed,
          _items=dict.items, _copy=list.copy, _slice=tuple.__getitem__, _all=slice(None), _inf=_INFINITY,
          _range=range, _len=len, _str=str, _bool=bool, _integer=int, _real=float, _list=list, _tuple=tuple,
          _dict=dict, _error=TypeError):
    """JSON text of `value` (None, bool, int, float, str, and lists, tuples and str-keyed dicts of them, of
    subclasses too), for the report's lines. Written with the built-in types' own methods alone, each held as
    a default value (a subclass's own methods are never called), and without recursion through a global
    name: not through `json`, whose shared encoder (`json._default_encoder`) code under test can change in
    place between two lines of the report."""
    parts, stack = [], [(False, value)]
    while stack:
        literal, item = stack.pop()
        if literal:
            parts.append(item)
            continue
        kind = _type(item)
        if _subclass(kind, _str):
            parts.append('"' + _translate(item, _escapes) + '"')
        elif item is None:
            parts.append("null")
        elif kind is _bool:
            parts.append("true" if item else "false")
        elif _subclass(kind, _integer):
            parts.append(_int(item))
        elif _subclass(kind, _real):
            number = _to_float(item)  # a plain float: no comparison of a subclass's own
            parts.append(_float(number) if number == number and number != _inf and number != -_inf
                         else "NaN" if number != number else "Infinity" if number > 0 else "-Infinity")
        elif _subclass(kind, (_list, _tuple, _dict)):
            pairs = _subclass(kind, _dict)
            entries = _copy(item) if _subclass(kind, _list) else _slice(item, _all) if not pairs else []
            if pairs:
                for key, entry in _items(item):
                    if not _subclass(_type(key), _str):
                        raise _error("a report's keys are strings")
                    entries.append((key, entry))
            stack.append((True, "}" if pairs else "]"))
            for index in _reversed(_range(_len(entries))):
                if pairs:
                    stack.append((False, entries[index][1]))
                    stack.append((True, ": "))
                    stack.append((False, entries[index][0]))
                else:
                    stack.append((False, entries[index]))
                if index:
                    stack.append((True, ", "))
            stack.append((True, "{" if pairs else "["))
        else:
            raise _error("a report holds only JSON's types, not " + kind.__name__)
    return _join("", parts)


def words(line):
    """A control line (bytes or str, without its newline) split into words (bytes)."""
    return (line.encode("ascii", "replace") if isinstance(line, str) else line).split()
