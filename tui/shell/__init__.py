"""The app's machinery around the screens: launching, app-wide messages, start-up prewarm, GC pacing."""
