"""The embedded schedd of the demo: queue operations and job states (``schedd``), policy
expressions (``policy``), crondor wiring (``cron``) and the history file (``history``)."""
