"""The execute side: an embedded startd and starter (see engine/execute/startd.py)."""
