"""A program that blocks in the ways RL code does, and measures how long it
was blocked itself (time.monotonic_ns around each blocking call), printing
the totals as one JSON line:

  - a writer thread (like TensorBoard's SummaryWriter's) blocked on
    queue.get for the whole run, handed 3 events;
  - the main thread computing in pure Python meanwhile, then blocked on a
    multiprocessing child's pipe (Connection.recv -> os.read), in
    time.sleep, in threading.Event.wait and in joins.

  blocking_threads.py [SECONDS_OF_COMPUTE]
"""
import json
import multiprocessing
import queue
import sys
import threading
import time

blocked_ns = {"writer": 0, "main": 0}


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
    for _ in range(3):  # Work while the writer waits; 3 events, as a short RL run logs.
        compute(seconds / 3)
        events.put("event")
    # A parent blocked on its worker's pipe.
    receiving, sending = multiprocessing.Pipe(duplex=False)
    process = multiprocessing.Process(target=child, args=(sending,))
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
    print(json.dumps({"blocked_ns": blocked_ns}), flush=True)


if __name__ == "__main__":
    main()
