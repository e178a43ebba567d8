"""`python -m launcher`: the same as the `uno-launcher` command."""

import sys

from launcher.cli import main

sys.exit(main())
