"""Persistent ask/tell studies: causal optimisation of a real system over days, stored in a
database (SQLite by default, PostgreSQL for many workers)."""

from causalbandits.studies.spec import StudyError, StudySpec
from causalbandits.studies.study import DEFAULT_STORAGE, Study

__all__ = ["DEFAULT_STORAGE", "Study", "StudyError", "StudySpec"]
