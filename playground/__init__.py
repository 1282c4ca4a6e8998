"""The playground: a trio runtime for the pure protocols in `protocol/`, and its front ends."""
