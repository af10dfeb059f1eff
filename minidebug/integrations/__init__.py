"""Adapters for other frameworks; each is imported only when used, and may need an extra."""
