from .invoice import total_cents
