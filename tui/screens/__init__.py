"""One module per screen (product.md §6)."""
