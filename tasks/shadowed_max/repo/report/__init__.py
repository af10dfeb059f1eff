from .summary import summary
