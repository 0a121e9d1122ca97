"""eaglelint: static checks that SGLang model wrappers delegate the speculative-decoding interfaces."""

__version__ = "0.1.0"
