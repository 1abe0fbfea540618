"""The package's version, where every module that writes it reads it: the installed
distribution's, whose one source is pyproject.toml."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("chronoprobe")
except PackageNotFoundError:  # the source tree on the path, never installed
    __version__ = "0+unknown"
