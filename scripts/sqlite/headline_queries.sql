-- The report's headline figures from an SQLite export:
--
--   rlscope export runs/r1 --sqlite r1.db
--   sqlite3 -header -column r1.db < scripts/sqlite/headline_queries.sql
--
-- Each query follows a "-- name:" line (test/e2e/sqlite_export_e2e_test.py
-- runs every one on a real run and compares it with its report.json). The
-- breakdown queries read report_rows in the report's own view (corrected
-- when meta says so); the others read the trace tables, whose times are
-- as measured: they equal the report's figures when it is not corrected.
-- "The loop" is every operation but startup and teardown; shares are of
-- CPU thread time (resource CPU or CPU+GPU, no Wait), as the headline's.

-- name: dominant_operation
-- The operation that dominates the loop, and its share of it.
WITH shown AS (
  SELECT CASE WHEN value = 1 THEN 'corrected' ELSE 'uncorrected' END AS view FROM meta WHERE key = 'corrected'),
loop AS (
  SELECT operation, SUM(ns) AS ns FROM report_rows JOIN shown USING (view)
  WHERE resource != 'GPU' AND category != 'Wait' AND operation NOT IN ('startup', 'teardown')
  GROUP BY operation)
SELECT operation, ns, (SELECT SUM(ns) FROM loop) AS loop_ns,
       100.0 * ns / (SELECT SUM(ns) FROM loop) AS percent_of_loop
FROM loop ORDER BY ns DESC, operation LIMIT 1;

-- name: level_shares
-- The loop by level (category), largest first.
WITH shown AS (
  SELECT CASE WHEN value = 1 THEN 'corrected' ELSE 'uncorrected' END AS view FROM meta WHERE key = 'corrected'),
loop AS (
  SELECT category, ns FROM report_rows JOIN shown USING (view)
  WHERE resource != 'GPU' AND category != 'Wait' AND operation NOT IN ('startup', 'teardown'))
SELECT category, SUM(ns) AS ns, 100.0 * SUM(ns) / (SELECT SUM(ns) FROM loop) AS percent_of_loop
FROM loop GROUP BY category ORDER BY ns DESC, category;

-- name: gpu_busy
-- Time some GPU of any process was busy (the union of every kernel, copy
-- and memset), next to the run's wall time.
WITH ordered AS (
  SELECT begin_ns, end_ns,
         MAX(end_ns) OVER (ORDER BY begin_ns, end_ns ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_end
  FROM gpu_activities),
islands AS (
  SELECT begin_ns, end_ns,
         SUM(CASE WHEN before_end IS NULL OR begin_ns > before_end THEN 1 ELSE 0 END)
           OVER (ORDER BY begin_ns, end_ns ROWS UNBOUNDED PRECEDING) AS island
  FROM ordered),
busy AS (SELECT MAX(end_ns) - MIN(begin_ns) AS ns FROM islands GROUP BY island)
SELECT COALESCE(SUM(ns), 0) AS gpu_busy_ns, (SELECT value FROM meta WHERE key = 'wall_ns') AS wall_ns FROM busy;

-- name: kernels_per_operation
-- Kernels per operation, by launch (the operation of the CUDA call that
-- launched each), with their summed duration.
SELECT p.pid, s.text AS operation, COUNT(*) AS kernels, SUM(g.end_ns - g.begin_ns) AS kernel_ns
FROM gpu_activities g JOIN processes p ON p.id = g.process_id JOIN strings s ON s.id = g.operation_id
WHERE g.kind = 'Kernel'
GROUP BY p.pid, s.text ORDER BY p.pid, s.text;

-- name: top_user_line
-- The user's own line that caused the most native time in the loop
-- (calls inside no other native call, so no time counts twice).
SELECT t.pid, op.text AS operation, loc.text AS code, c.user_line AS line,
       SUM(c.end_ns - c.begin_ns) AS native_ns, COUNT(*) AS calls
FROM python_calls c
  JOIN threads t ON t.id = c.thread_id
  JOIN strings op ON op.id = c.operation_id
  JOIN strings loc ON loc.id = c.user_location_id
WHERE c.nested = 0 AND op.text NOT IN ('startup', 'teardown')
GROUP BY t.pid, op.text, loc.text, c.user_line
ORDER BY native_ns DESC LIMIT 1;

-- name: top_user_line_as_reported
-- The same from the report's own lines (report_lines: corrected when the
-- report is), as the headline gives it.
SELECT pid, operation, code, line, outer_ns AS native_ns, calls
FROM report_lines
WHERE lines = 'user' AND user_code = 1 AND outer_ns > 0 AND operation NOT IN ('startup', 'teardown')
ORDER BY outer_ns DESC LIMIT 1;

-- name: operation_instances
-- How many times each operation was entered, per process.
SELECT t.pid, s.text AS operation, SUM(i.instances) AS instances
FROM operation_instances i JOIN threads t ON t.id = i.thread_id JOIN strings s ON s.id = i.operation_id
GROUP BY t.pid, s.text ORDER BY t.pid, s.text;

-- name: instance_times
-- How long one instance of each operation took (the report's statistics).
SELECT pid, operation, instances, mean_ns, p50_ns, p95_ns, max_ns
FROM report_instances ORDER BY pid, total_ns DESC;

-- name: time_per_step
-- The loop's thread time per environment step, as the headline gives it
-- (NULL without steps).
WITH shown AS (
  SELECT CASE WHEN value = 1 THEN 'corrected' ELSE 'uncorrected' END AS view FROM meta WHERE key = 'corrected'),
loop AS (
  SELECT SUM(ns) AS ns FROM report_rows JOIN shown USING (view)
  WHERE resource != 'GPU' AND category != 'Wait' AND operation NOT IN ('startup', 'teardown'))
SELECT (SELECT value FROM meta WHERE key = 'steps') AS steps,
       CASE WHEN (SELECT value FROM meta WHERE key = 'steps') > 0
            THEN ROUND(1.0 * (SELECT ns FROM loop) / (SELECT value FROM meta WHERE key = 'steps')) END AS loop_ns_per_step;
