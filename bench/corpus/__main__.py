"""`python -m bench.corpus`: build a preset corpus (see the package's docstring)."""

import sys

from bench.corpus.build import main

sys.exit(main())
