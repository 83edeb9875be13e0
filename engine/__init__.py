"""RouteDeck's engine: HTCondor's Job Router and crondor, re-implemented headless.

Invariants for every module below this package:
- no import of ``textual``, ``rich`` or ``tui`` (tests/contracts/test_import_hygiene.py checks it);
- no reading of the wall clock and no sleeping, except in ``engine.clock`` and the one runtime loop:
  logic takes ``now`` (epoch seconds) or a :class:`engine.clock.Clock`;
- ClassAds are parsed and evaluated only through ``engine.classad`` (the real classad2 library).
"""
