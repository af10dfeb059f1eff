from .bus import Bus
from .helpers import on_each

__all__ = ["Bus", "on_each"]
