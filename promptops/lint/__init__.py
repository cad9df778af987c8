"""`promptops lint`: a rule engine over the validated package and its raw files."""
