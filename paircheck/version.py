"""paircheck's version, in a module of its own: every module that writes it into a result
imports it from here, so that none of them imports the package's face (``paircheck/__init__``)."""

__version__ = "0.1.0"
