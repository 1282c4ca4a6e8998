"""What a process's standard streams are, for the test that a forked case has those of a
spawned one (tests/test_campaign.py): written as JSON to the file named last on its
command line."""

import json
import sys

streams = {"stdin": sys.stdin, "stdout": sys.stdout, "stderr": sys.stderr}
report = {name: stream and {"fileno": stream.fileno(), "isatty": stream.isatty(), "mode": stream.mode,
                            "encoding": stream.encoding, "errors": stream.errors,
                            "line_buffering": stream.line_buffering, "write_through": stream.write_through}
          for name, stream in streams.items()}
report["the same as sys.__stdin__ and the others"] = [stream is getattr(sys, f"__{name}__")
                                                      for name, stream in streams.items()]
with open(sys.argv[-1], "w") as f:
    json.dump(report, f)
