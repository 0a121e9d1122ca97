"""The summary cache and its entries: files kept by the digest of what they were made from,
encoded as plain JSON data. It imports the syntax room below it, no other; how a summary
is laid out is the Python room's (python/summary_codec.py), given to the codec as data
(analysis/__init__.py)."""
