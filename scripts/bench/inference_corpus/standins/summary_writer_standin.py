"""A stand-in for torch.utils.tensorboard.SummaryWriter with the real one's
threading: add_* calls queue an event, a daemon writer thread waits on the
queue (waking up every flush_secs) and appends the events to a text file in
log_dir. What CleanRL calls: add_scalar, add_text, add_histogram, flush,
close."""
import os
import queue
import threading
import time

__all__ = ["SummaryWriter"]


class SummaryWriter:
    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120, filename_suffix=""):
        self.log_dir = log_dir or os.path.join("runs", f"standin{comment}")
        os.makedirs(self.log_dir, exist_ok=True)
        self._file = open(os.path.join(self.log_dir, f"events.standin{filename_suffix}.txt"), "a")
        self._queue = queue.Queue(max_queue)
        self._flush_secs = flush_secs
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="SummaryWriterStandin", daemon=True)
        self._thread.start()

    def _run(self):
        next_flush = time.time() + self._flush_secs
        while True:
            try:
                item = self._queue.get(timeout=max(0.0, next_flush - time.time()))
            except queue.Empty:
                item = ()
            if item is None:
                self._file.flush()
                return
            if item:
                self._file.write("\t".join(str(part) for part in item) + "\n")
            if time.time() >= next_flush:
                self._file.flush()
                next_flush = time.time() + self._flush_secs

    def _put(self, *item):
        if not self._closed:
            self._queue.put(item)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, **kwargs):
        # Like the real one, a one-element array or tensor is a scalar too
        # (numpy 2 refuses float() of a shape-(1,) array).
        value = scalar_value.item() if hasattr(scalar_value, "item") else scalar_value
        self._put("scalar", tag, float(value), global_step, walltime or time.time())

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._put("text", tag, text_string.replace("\n", " "), global_step, walltime or time.time())

    def add_histogram(self, tag, values, global_step=None, **kwargs):
        self._put("histogram", tag, global_step)

    def flush(self):
        self._file.flush()

    def close(self):
        if not self._closed:
            self._closed = True
            self._queue.put(None)
            self._thread.join()
            self._file.close()
