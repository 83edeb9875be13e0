"""What the user types: the one keymap, the command table, the ':' line's handlers, type-ahead."""
