"""Recording a CE's job queue history (issue 27): ``archive`` (segments, index, state
checkpoints on disk), ``recorder`` (following the live log across compactions into an archive),
``status`` (what an archive holds). Replay reads an archive through
``engine.feeds.replay.archive``."""
