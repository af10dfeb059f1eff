from datetime import date

SATURDAY, SUNDAY = 6, 0


def is_weekend(day: date) -> bool:
    return day.weekday() in (SATURDAY, SUNDAY)


def price(day: date, base: float) -> float:
    return round(base * 1.5, 2) if is_weekend(day) else base
