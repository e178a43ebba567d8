"""The root of every error the project raises on purpose.

Each error class derives from `LauncherError` and also from the builtin it resembles (a bad setting is a
`ValueError`, a motor that may not run now a `RuntimeError`), as gpiozero's errors do: a caller catches all of
ours with `except LauncherError`, or one kind with the builtin it already knows.
"""


class LauncherError(Exception):
    """An error of the UNO launcher's own; the message says what was wrong, for the person who can fix it."""
