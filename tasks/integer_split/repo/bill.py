def split(total_cents, people):
    """Shares in cents that add up to total_cents, as equal as possible."""
    share = total_cents // people
    return [share] * people
