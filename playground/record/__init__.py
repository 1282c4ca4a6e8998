"""What a run leaves for people: transcripts, their checks and re-runs, exports, summaries, files."""
