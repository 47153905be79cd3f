"""The review domain is plain Python at run time too: importing it and using its plain
functions loads no Django (tests/test_architecture.py checks the imports on the source;
`memoryui/review/state.py` is the one ORM adapter)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import memoryui.review


def test_importing_the_domain_loads_no_django(tmp_path: Path) -> None:
    code = (
        "import sys, datetime as dt\n"
        "import memoryui.review as r\n"
        "from memoryui.store import Store\n"
        f"s = Store({str(tmp_path / 'ws')!r})\n"
        "r.daily_files(s, dt.date(2026, 1, 1), dt.date(2026, 1, 7))\n"
        "r.existing_names(s, r.TARGET_KINDS[2]); r.make_target(s, 'global')\n"
        "s.close()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))\n"
    )
    root = Path(memoryui.review.__file__).parent.parent.parent
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=root)
    assert out.stdout.strip() == "[]"
