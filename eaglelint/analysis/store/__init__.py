"""The summary cache and its entries: files kept by the digest of what they were made from,
encoded as plain JSON data."""
