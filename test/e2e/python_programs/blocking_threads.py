"""A program that blocks in the ways RL code does, and measures how long it
was blocked itself (time.monotonic_ns around each blocking call), printing
the totals as one JSON line:

  - a writer thread (like TensorBoard's SummaryWriter's) blocked on
    queue.get for the whole run, handed 3 events;
  - a reader thread (like multiprocessing's resource tracker) iterating
    over a pipe (`for line in f:`, no call the Python hook sees), handed
    one line mid-run and its end at the end;
  - the main thread computing in pure Python meanwhile, then blocked on a
    multiprocessing child's pipe (Connection.recv -> os.read), in
    time.sleep, in threading.Event.wait and in joins.

  blocking_threads.py [SECONDS_OF_COMPUTE]
"""
import json
import multiprocessing
import os
import queue
import sys
import threading
import time

blocked_ns = {"writer": 0, "main": 0, "reader": 0}


def timed(who, call, *args):
    begin = time.monotonic_ns()
    result = call(*args)
    blocked_ns[who] += time.monotonic_ns() - begin
    return result


def writer(events):
    while True:
        item = timed("writer", events.get)
        if item is None:
            return
        sum(i * i for i in range(1000))  # "Writes" the event: a little work.


def reader(fd):
    begin = time.monotonic_ns()
    with open(fd, "rb") as pipe:
        for line in pipe:
            pass
    blocked_ns["reader"] += time.monotonic_ns() - begin


def compute(seconds):
    deadline = time.monotonic() + seconds
    total = 0
    while time.monotonic() < deadline:
        total += sum(i * i for i in range(2000))
    return total


def child(connection):
    compute(0.3)
    time.sleep(1.0)
    connection.send("done")
    connection.close()


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
    events = queue.Queue()
    thread = threading.Thread(target=writer, args=(events,), name="writer")
    thread.start()
    read_end, write_end = os.pipe()
    pipe_reader = threading.Thread(target=reader, args=(read_end,), name="reader")
    pipe_reader.start()
    for step in range(3):  # Work while the writer waits; 3 events, as a short RL run logs.
        compute(seconds / 3)
        events.put("event")
        if step == 1:
            os.write(write_end, b"registered\n")
    # A parent blocked on its worker's pipe. Forked, on every Python: 3.14
    # starts children through a fork server by default, and the parent's
    # waits for that server, inside process.start(), are not timed here.
    forked = multiprocessing.get_context("fork")
    receiving, sending = forked.Pipe(duplex=False)
    process = forked.Process(target=child, args=(sending,))
    process.start()
    sending.close()
    timed("main", receiving.recv)
    timed("main", process.join)
    timed("main", time.sleep, 0.8)
    ready = threading.Event()
    setter = threading.Timer(0.8, ready.set)
    setter.start()
    timed("main", ready.wait)
    timed("main", setter.join)
    events.put(None)
    timed("main", thread.join)
    os.close(write_end)
    timed("main", pipe_reader.join)
    print(json.dumps({"blocked_ns": blocked_ns}), flush=True)


if __name__ == "__main__":
    main()
