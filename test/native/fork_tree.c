/* fork_tree: a tree of N processes made by fork() (test/e2e/fork_e2e_test.py).

     fork_tree N PIDFILE [LIB]

   Process i (the root is 0) appends its pid to PIDFILE, dlopen()s and
   dlclose()s LIB when given (right after its birth, so a loader lock left
   held across the fork that made it shows), then forks children 2i+1 and
   2i+2 (those below N), each after a few milliseconds of spinning so the
   forks land anywhere in the parent's flusher cycle, and waits for them.
   The root prints "N processes, F failed" and exits 0 only if every
   descendant did. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Spin: 0-24 ms, varied by node and child (no sleep: a sleeping parent
   lets its flusher run only at its own 20 ms ticks). */
static void Spin(int node, int child) {
  const long until = NowNs() + (long)((node * 7 + child * 13) % 25) * 1000000L;
  while (NowNs() < until) {
  }
}

static void AppendPid(const char* path) {
  const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) return;
  char line[32];
  const int length = snprintf(line, sizeof(line), "%d\n", (int)getpid());
  if (write(fd, line, (size_t)length) != length) perror("fork_tree: write");
  close(fd);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: fork_tree N PIDFILE [LIB]\n");
    return 2;
  }
  const int total = atoi(argv[1]);
  const char* pid_file = argv[2];
  const char* library = argc > 3 ? argv[3] : NULL;
  int node = 0;
  int failed = 0;
  pid_t children[2];
  int child_count;
restart:
  AppendPid(pid_file);
  if (library != NULL) {
    void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
      fprintf(stderr, "fork_tree: %s\n", dlerror());
      _exit(4);
    }
    dlclose(handle);
  }
  child_count = 0;
  for (int c = 1; c <= 2; ++c) {
    const int child = 2 * node + c;
    if (child >= total) break;
    Spin(node, c);
    const pid_t pid = fork();
    if (pid == 0) {
      node = child;
      failed = 0;
      goto restart;
    }
    if (pid < 0) {
      ++failed;
      continue;
    }
    children[child_count++] = pid;
  }
  for (int i = 0; i < child_count; ++i) {
    int status = 0;
    if (waitpid(children[i], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  if (node != 0) exit(failed == 0 ? 0 : 1);
  printf("%d processes, %d failed\n", total, failed);
  return failed == 0 ? 0 : 1;
}
