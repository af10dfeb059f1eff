from .convert import convert
