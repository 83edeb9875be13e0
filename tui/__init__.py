"""RouteDeck's Textual front end and the ``routedeck`` entry point.

Importing this package must stay cheap: Textual is imported only by the screen commands.
"""
