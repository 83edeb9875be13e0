"""Text the screens show: formatters, column legends, a route's source text."""
