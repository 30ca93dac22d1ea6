"""Warnings for settings that the library's defaults cannot serve well.

Each is an :class:`AssumptionWarning`, issued once when an environment or a policy is built
and attributed to the first caller outside the library. Silence them all with
``warnings.filterwarnings("ignore", category=AssumptionWarning)``.
"""

from __future__ import annotations

import os
import sys
import warnings

_LIBRARY = os.path.dirname(os.path.abspath(__file__)) + os.sep


class AssumptionWarning(UserWarning):
    """An environment or policy setting that breaks an assumption of a default."""


def warn_assumption(message: str) -> None:
    """Issue ``message`` as an :class:`AssumptionWarning` at the first caller outside the
    library, so that the warning points at the user's line."""
    frame, level = sys._getframe(0), 1
    while frame is not None and frame.f_code.co_filename.startswith(_LIBRARY):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, AssumptionWarning, stacklevel=level)
