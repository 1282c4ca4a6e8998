"""Running the engine: on trio (headless, live), by hand (the harness), and its history."""
