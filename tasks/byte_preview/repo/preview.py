def preview(text: str, limit: int) -> str:
    """The first `limit` characters of text."""
    data = text.encode("utf-8")[:limit]
    return data.decode("ascii", errors="ignore")
