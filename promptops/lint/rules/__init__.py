"""One module per lint rule; ``promptops.lint.registry`` lists them."""
