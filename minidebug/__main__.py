"""`python -m minidebug`: the `minidebug` command."""

import sys

from .run.cli import main

if __name__ == "__main__":
    sys.exit(main())
