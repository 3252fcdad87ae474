"""Options that carry meaning (a test's sidedness, a family-wise correction, …) as `StrEnum`
types, and reading one where it enters — a run's stored settings, a command-line value.

A `StrEnum` member is its string (`Sides.TWO == "two"`, stored and printed as `two`), so
settings keep their JSON form; what the type adds is that only its members exist. A value
read from outside is turned into a member once, where it enters, and a value that is none
of them is refused there in one line naming where it came from — never passed on as a bare
string that one reader takes for 'two' and another for 'one'.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

from store.errors import UserError

Option = TypeVar("Option", bound=StrEnum)


def choices(kind: type[StrEnum]) -> list[str]:
    """The values of an option type, in their declared order (for `click.Choice`)."""
    return [member.value for member in kind]


def parse_option(kind: type[Option], value: object, *, field: str, where: str) -> Option:
    """`value` as a member of `kind`.

    Args:
        kind: the option's type.
        value: what was read (a member passes through).
        field: the setting's name, for the message.
        where: where it was read (e.g. "study s1's stored settings").

    Raises:
        UserError: `value` is not one of `kind`'s values.
    """
    if isinstance(value, kind):
        return value
    if isinstance(value, str) and value in choices(kind):
        return kind(value)
    raise UserError(f"{where}: {field} {value!r} is not one of {', '.join(choices(kind))}")
