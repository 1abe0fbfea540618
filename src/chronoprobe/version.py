"""The package's version, where every module that writes it reads it."""

__version__ = "0.4.0"
