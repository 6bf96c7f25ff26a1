"""Waits for DIR/go, starts N /bin/cat children that share one pipe as
stdin, says so in DIR/spawned, waits for DIR/resume, then ends the pipe so
every child exits, and waits for them."""
import os
import subprocess
import sys
import time

count, directory = int(sys.argv[1]), sys.argv[2]


def wait_for(name):
    deadline = time.monotonic() + 300
    while not os.path.exists(os.path.join(directory, name)):
        if time.monotonic() > deadline:
            sys.exit(f"{name} never came")
        time.sleep(0.02)


wait_for("go")
read_end, write_end = os.pipe()
children = [subprocess.Popen(["/bin/cat"], stdin=read_end, stdout=subprocess.DEVNULL) for _ in range(count)]
os.close(read_end)
open(os.path.join(directory, "spawned"), "w").close()
wait_for("resume")
os.close(write_end)
sys.exit(max(child.wait() for child in children))
