"""Every error the project raises is a LauncherError (docs/ARCHITECTURE.md): a caller can catch the project's own
errors apart from any library's, and each is also the builtin it resembles."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import launcher
import webui
from launcher.errors import LauncherError


def test_every_exception_class_of_the_project_is_a_launcher_error() -> None:
    outside = []
    for package in (launcher, webui):
        for module_info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            firmware = ("launcher.firmware", "launcher.hardware.framing")  # framing.py is the firmware's own file
            if module_info.name.endswith("__main__") or module_info.name.startswith(firmware):
                continue  # the command line (it runs when imported) and MicroPython's firmware, not the daemon's
            module = importlib.import_module(module_info.name)
            for name, value in vars(module).items():
                if (
                    inspect.isclass(value)
                    and issubclass(value, BaseException)
                    and value.__module__ == module.__name__
                    and not issubclass(value, LauncherError)
                ):
                    outside.append(f"{module.__name__}.{name}")
    assert outside == []
