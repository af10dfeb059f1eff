from .report import report
