"""The engine of a run, pure: its model of nodes, links, time and commands, and the monitor."""
