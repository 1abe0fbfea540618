"""A user's mistakes, told apart from chronoprobe's bugs.

Every error chronoprobe raises for something its user can fix (an option, a file, a record, a
config, a server's reply) is a :class:`UserError`: the command line prints it as one line and
exits with code 2. Any other exception is a bug in chronoprobe, and the command line prints
its traceback and says where to report it.
"""

from __future__ import annotations


class UserError(ValueError):
    """A mistake the user can fix, its message the one line that says what and where.

    A ``ValueError``, so that pydantic validators turn it into a validation error and callers
    that catch ``ValueError`` keep doing so."""
