"""Real nodes (issue 23): the same pure protocol modules, one per process, over TCP.

wire.py      frames on a stream: a length, then one line of JSON (the transcript's
             message encoding); where a node listens
state.py     a node's safe storage as a file, written whole and durably, or refused
node.py      one node process: the simulation's node runner (core/runner.py) on trio's
             clock and sockets, its timers, its trace (`bully-tui node`)
link.py      a node's connection to one peer, FIFO, with a backoff from a peer that is down
control.py   a node's control socket: the cluster's commands, each checked by its type
traces.py    a node's trace in the transcript's format, written, and read and checked
             line by line
merge.py     the traces merged into one transcript the monitor, replay and export read
cluster.py   N node processes on the loopback (`--real`), and their run folder
attach.py    nodes started by hand, watched through their own connections (`attach`)
deferred.py  what trio and argparse import and a node never uses (TLS, hashes,
             compression), left out of a node's memory until something uses it
"""
