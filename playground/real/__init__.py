"""Real nodes (issue 23): the same pure protocol modules, one per process, over TCP.

wire.py      frames on a stream: a length, then one line of JSON (the transcript's
             message encoding)
state.py     a node's safe storage as a file, written whole and durably, or refused
node.py      one node process: its links, its timers, its trace (`bully-tui node`)
cluster.py   N node processes on the loopback, and their traces merged into one
             transcript the monitor, replay and export read (`--real`)
"""
