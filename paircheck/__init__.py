"""paircheck: is this draft model usable with this target for speculative decoding?

Data flows one way: sources read a model into a ModelDescription, engine rules compare
two descriptions into a Report, and formats render the Report.
"""

__version__ = "0.1.0"
