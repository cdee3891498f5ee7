"""prefixlint: keep prompt prefixes stable so that prefix caches hit."""
