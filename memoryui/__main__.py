"""`python -m memoryui ...`: the same as the `memoryui` console command."""

import sys

from memoryui.cli import main

sys.exit(main())
