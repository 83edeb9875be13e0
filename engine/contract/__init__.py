"""The engine's contract with its readers (the TUI, the headless commands): the snapshot types, the commands, and HTCondor's codes."""
