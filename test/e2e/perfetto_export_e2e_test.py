#!/usr/bin/env python3
"""End-to-end test of `rlscope export --perfetto`: the NVTX client profiled
with the fake CUPTI, exported as a Perfetto protobuf trace, decoded with
`protoc --decode` against our schema subset (test/report/
perfetto_trace_subset.proto) and checked for structure: tracks and their
parents, balanced and nested slices per track, one GPU slice per launch
flow, and the report's operations.

Exits 77 (ctest's SKIP_RETURN_CODE) when protoc is missing
(scripts/install_deps.sh installs it).

  perfetto_export_e2e_test.py --rlscope BIN --client BIN --cupti LIB --schema PROTO
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import ARGS, ProfiledRun, main, run_rlscope  # noqa: E402

SKIP = 77
ESCAPES = {"n": b"\n", "r": b"\r", "t": b"\t", '"': b'"', "'": b"'", "\\": b"\\"}


def unescape(text):
    """A protobuf text-format string literal's content, decoded."""
    out = bytearray()
    i = 0
    while i < len(text):
        if text[i] != "\\":
            out += text[i].encode()
            i += 1
        elif text[i + 1] in ESCAPES:
            out += ESCAPES[text[i + 1]]
            i += 2
        elif text[i + 1] == "x":
            digits = re.match(r"[0-9a-fA-F]{1,2}", text[i + 2:]).group(0)
            out.append(int(digits, 16))
            i += 2 + len(digits)
        else:
            digits = re.match(r"[0-7]{1,3}", text[i + 1:]).group(0)
            out.append(int(digits, 8))
            i += 1 + len(digits)
    return out.decode("utf-8", errors="replace")


def parse_text_format(text):
    """protoc's text output as nested dicts: field name -> list of values."""
    root = collections.defaultdict(list)
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
        elif line.endswith("{"):
            child = collections.defaultdict(list)
            stack[-1][line[:-1].strip()].append(child)
            stack.append(child)
        else:
            name, value = line.split(": ", 1)
            if value.startswith('"'):
                value = unescape(value[1:-1])
            elif re.fullmatch(r"-?\d+", value):
                value = int(value)
            stack[-1][name].append(value)
    assert len(stack) == 1, "unbalanced braces in protoc's output"
    return root


def one(message, name, default=None):
    values = message.get(name, [])
    return values[0] if values else default


class PerfettoExport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.holder = unittest.TestCase()
        cls.run_ = ProfiledRun(cls.holder, [ARGS.client, "--steps", "40", "--threads", "2", "--library-launches", "2"],
                               options=("--cupti", ARGS.cupti))
        cls.path = os.path.join(cls.run_.dir, "trace.perfetto")
        cls.result = run_rlscope("export", cls.run_.out, "--perfetto", cls.path)
        cls.trace = None
        if cls.result.returncode == 0:
            with open(cls.path, "rb") as f:
                decoded = subprocess.run(["protoc", f"--proto_path={os.path.dirname(ARGS.schema)}",
                                          "--decode=perfetto.protos.Trace", os.path.basename(ARGS.schema)],
                                         stdin=f, capture_output=True, check=True)
            cls.trace = parse_text_format(decoded.stdout.decode())

    @classmethod
    def tearDownClass(cls):
        cls.holder.doCleanups()

    def setUp(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        self.report = self.run_.report
        self.packets = self.trace["packet"]
        self.names, self.categories = {}, {}
        self.tracks = {}
        self.events = collections.defaultdict(list)  # track uuid -> events, in file order.
        for packet in self.packets:
            self.assertEqual(one(packet, "trusted_packet_sequence_id"), 1)
            for interned in packet.get("interned_data", []):
                for entry in interned.get("event_names", []):
                    self.names[one(entry, "iid")] = one(entry, "name")
                for entry in interned.get("event_categories", []):
                    self.categories[one(entry, "iid")] = one(entry, "name")
            for track in packet.get("track_descriptor", []):
                self.assertNotIn(one(track, "uuid"), self.tracks)
                self.tracks[one(track, "uuid")] = track
            for event in packet.get("track_event", []):
                self.assertIn(one(event, "track_uuid"), self.tracks, "event on a track not yet described")
                self.events[one(event, "track_uuid")].append((one(packet, "timestamp"), event))

    def name(self, event):
        return self.names.get(one(event, "name_iid"))

    def test_first_packet_clears_incremental_state(self):
        self.assertEqual(one(self.packets[0], "sequence_flags"), 1)
        for packet in self.packets[1:]:
            if "track_event" in packet:
                self.assertEqual(one(packet, "sequence_flags"), 2)

    def test_every_thread_track_has_its_process_track(self):
        processes = {one(one(t, "process"), "pid"): uuid for uuid, t in self.tracks.items() if "process" in t}
        self.assertEqual(set(processes), {p["pid"] for p in self.report["processes"]})
        threads = [t for t in self.tracks.values() if "thread" in t]
        self.assertTrue(threads)
        for track in threads:
            pid = one(one(track, "thread"), "pid")
            self.assertIn(pid, processes)
            self.assertEqual(one(track, "parent_uuid"), processes[pid])
        for uuid, track in self.tracks.items():
            if "process" not in track:
                self.assertIn(one(track, "parent_uuid"), self.tracks, track)

    def test_slices_are_balanced_and_nested_per_track(self):
        for uuid, events in self.events.items():
            open_begins = []
            last = None
            for timestamp, event in events:
                if last is not None:
                    self.assertGreaterEqual(timestamp, last, f"track {uuid} goes back in time")
                last = timestamp
                kind = one(event, "type")
                if kind == "TYPE_SLICE_BEGIN":
                    self.assertIsNotNone(self.name(event))
                    open_begins.append(timestamp)
                elif kind == "TYPE_SLICE_END":
                    self.assertTrue(open_begins, f"END without BEGIN on track {uuid}")
                    self.assertGreaterEqual(timestamp, open_begins.pop())
                else:
                    self.assertEqual(kind, "TYPE_INSTANT")
            self.assertEqual(open_begins, [], f"track {uuid} leaves slices open")

    def gpu_tracks(self):
        return {uuid for uuid, t in self.tracks.items() if str(one(t, "name", "")).startswith("GPU ")}

    def test_each_launch_flow_ends_at_exactly_one_gpu_slice(self):
        gpu_tracks = self.gpu_tracks()
        self.assertTrue(gpu_tracks)
        starts, ends = collections.Counter(), collections.Counter()
        for uuid, events in self.events.items():
            for _, event in events:
                for flow in event.get("flow_ids", []):
                    self.assertNotIn(uuid, gpu_tracks)
                    starts[flow] += 1
                for flow in event.get("terminating_flow_ids", []):
                    self.assertIn(uuid, gpu_tracks)
                    ends[flow] += 1
        self.assertTrue(starts)
        self.assertEqual(set(starts), set(ends))
        self.assertEqual(max(starts.values()), 1)
        self.assertEqual(max(ends.values()), 1)

    def test_gpu_slices_match_the_reports_activity_counts(self):
        main_process = next(p for p in self.report["processes"] if p["forked_from"] == 0)
        process_uuid = next(uuid for uuid, t in self.tracks.items()
                            if one(one(t, "process", {}), "pid") == main_process["pid"])
        begins = [event for uuid in self.gpu_tracks() if one(self.tracks[uuid], "parent_uuid") == process_uuid
                  for _, event in self.events[uuid] if one(event, "type") == "TYPE_SLICE_BEGIN"]
        gpu = main_process["gpu"]
        self.assertEqual(len(begins), gpu["kernels"] + gpu["memcpys"] + gpu["memsets"])
        self.assertIn("Kernel", {self.categories[one(e, "category_iids")] for e in begins})

    def test_operation_names_are_the_reports(self):
        exported = {self.name(event) for events in self.events.values() for _, event in events
                    if one(event, "type") == "TYPE_SLICE_BEGIN"
                    and self.categories[one(event, "category_iids")] == "operation"}
        reported = {row["operation"] for row in self.report["rows"]} - {"(none)"}
        self.assertTrue(reported)
        self.assertEqual(exported, reported)


if __name__ == "__main__":
    if shutil.which("protoc") is None:
        print("SKIPPED: protoc is not installed (scripts/install_deps.sh installs it)")
        sys.exit(SKIP)
    main(extra_arguments=("--client", "--cupti", "--schema"))
