"""Where the tests read the lessons from.

``python3 tools/kit.py test`` sets ``MRTR_KIT_LESSONS`` to a copy of ``notebooks/`` as committed
(git HEAD), so the tests check the lessons, not a learner's copies that JupyterLab saved with
their own outputs and answers. Without it (plain ``pytest``), ``notebooks/`` as it is.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSONS = Path(os.environ.get("MRTR_KIT_LESSONS") or ROOT / "notebooks")
