from .fill import TEMPLATE, fill
