from datetime import datetime, timedelta, timezone

OFFSETS = {"New_York": -5, "Berlin": 1, "UTC": 0}


def to_utc(local: datetime, city: str) -> datetime:
    offset = timedelta(hours=OFFSETS[city])
    return (local + offset).replace(tzinfo=timezone.utc)
