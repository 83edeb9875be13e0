"""Reusable widgets: gauges and sparklines (text), the Line API jobs view, the command line."""
