from .report import summarize

__all__ = ["summarize"]
