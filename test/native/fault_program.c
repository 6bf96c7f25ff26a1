/* fault_program: the process shapes and failures of the fault suite
   (test/e2e/fault_e2e_test.py), one mode per argument. Every mode prints
   only deterministic lines on stdout (the test compares them with an
   unprofiled run) and exits with a status of its own choosing; the work
   in between calls libsimtest's functions, which the test hooks as
   simulator calls (--sim '*libsimtest*:simtest_*'), so each process and
   thread has events to stream.

     fault_program work MS [STATUS]   hooked calls for MS ms, then exit(STATUS)
     fault_program calls N [STATUS]   N rounds of 101 hooked calls (as work's),
                                      then exit(STATUS): a trace size that no
                                      machine's speed or load changes
     fault_program crash segv|bus|ill|fpe|abort|kill  work 200 ms and a burst of
                                      calls, then die of that signal
                                      (segv_faulthandler: a SIGSEGV handler as
                                      Python's faulthandler's)
     fault_program crash_two_threads  two threads each make a burst of calls, then
                                      both fault at the same moment
     fault_program crash_at_once      a burst of calls and a fault, all in about 1 ms
     fault_program own_handler        the program's own SIGSEGV handler, then a fault
     fault_program chain_handler      a SIGSEGV handler set with signal() that calls
                                      the one it replaced, then a fault
     fault_program fork               fork without exec; the child works, exits 3
     fault_program fork_storm N       N forks in turn while four threads work
     fault_program forkexec           fork + exec of `work`
     fault_program spawn              posix_spawn of `work`
     fault_program threads N          N threads working at once
     fault_program churn N            N short threads, created and joined in turn
                                      (then its peak memory on stderr: vm_hwm_kb K)
     fault_program thread_exit        exit(7) from a non-main thread mid-work
     fault_program dlclose LIB        dlopen LIB, call it, dlclose, three times
     fault_program signals MS         SIGALRM and SIGUSR1 handlers that call a
                                      hooked function, at a high rate, for MS ms */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test/native/simtest.h"

extern char** environ;

static const char* g_self;

static long NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Hooked calls made by this thread (the crash cases report them). */
static __thread long t_calls;

/* Round: 100 hooked calls and a 20 us hooked wait. Work: rounds for `ms`
   milliseconds (the sum is never printed: the number of calls depends on
   the machine's speed). */
static long Round(void) {
  long sum = 0;
  for (int i = 0; i < 100; ++i) sum += simtest_add(i, 1);
  simtest_busy_wait_ns(20000);
  t_calls += 101;
  return sum;
}

static long Work(long ms) {
  const long end = NowNs() + ms * 1000000L;
  long sum = 0;
  while (NowNs() < end) sum += Round();
  return sum;
}

/* WorkRounds: `rounds` of Work's rounds, however long they take. */
static long WorkRounds(long rounds) {
  long sum = 0;
  for (long r = 0; r < rounds; ++r) sum += Round();
  return sum;
}

static int WaitChild(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A handler as Python's faulthandler installs it: on the fault it puts
   back the action it replaced (SIG_DFL, as the program sees it) and
   raises the signal again. */
static struct sigaction g_replaced_segv;

static void OnSegvLikeFaulthandler(int signal_number) {
  static const char message[] = "Fatal error: Segmentation fault\n";
  (void)!write(STDERR_FILENO, message, sizeof(message) - 1);
  sigaction(signal_number, &g_replaced_segv, NULL);
  raise(signal_number);
}

/* BusError: a read of a mapped page past the end of its file (SIGBUS,
   BUS_ADRERR). */
static void BusError(void) {
  const int fd = memfd_create("rlscope-fault-bus", 0);
  if (fd < 0 || ftruncate(fd, 4096) != 0) return;
  volatile char* page = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
  if (page == MAP_FAILED || ftruncate(fd, 0) != 0) return;
  (void)page[0];
}

/* Crash: dies right after a burst of calls that no periodic flush has
   sent yet; stderr says how many calls the process made in all, for the
   test to compare with what the report holds. */
static int Crash(const char* how) {
  if (strcmp(how, "segv_faulthandler") == 0) {
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = OnSegvLikeFaulthandler;
    action.sa_flags = SA_NODEFER | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &g_replaced_segv);
  }
  Work(200);
  printf("about to die: %s\n", how);
  fflush(stdout);
  long sum = 0;
  for (int i = 0; i < 20000; ++i) sum += simtest_add(i, 2);
  t_calls += 20000;
  fprintf(stderr, "calls %ld (%ld)\n", t_calls, sum & 1);
  if (strcmp(how, "segv") == 0 || strcmp(how, "segv_faulthandler") == 0) {
    volatile int* null = NULL;
    *null = 1;
  } else if (strcmp(how, "bus") == 0) {
    BusError();
  } else if (strcmp(how, "ill") == 0) {
    __builtin_trap(); /* ud2 on x86-64, brk on AArch64: SIGILL / SIGTRAP. */
  } else if (strcmp(how, "fpe") == 0) {
    volatile int seven = 7, zero = 0; /* 1 / x would compile to a compare. */
    return seven / zero;
  } else if (strcmp(how, "abort") == 0) {
    abort();
  } else if (strcmp(how, "kill") == 0) {
    kill(getpid(), SIGKILL);
  }
  return 1;
}

/* CrashTwoThreads: two threads make a burst of calls each, then both
   fault at once, so the second faults while the first waits for the
   crash flush; stderr gives the calls of both. */
static pthread_barrier_t g_bursts_done, g_fault_now;
static long g_thread_calls[2];

static void* BurstAndFault(void* arg) {
  long* calls = arg;
  Work(100);
  long sum = 0;
  for (int i = 0; i < 4000; ++i) sum += simtest_add(i, 3); /* Under half a ring: no early flush. */
  t_calls += 4000;
  *calls = t_calls + (sum & 0); /* sum is used, never printed. */
  pthread_barrier_wait(&g_bursts_done);
  pthread_barrier_wait(&g_fault_now);
  volatile int* null = NULL;
  *null = 1;
  return NULL;
}

static int CrashTwoThreads(void) {
  pthread_barrier_init(&g_bursts_done, NULL, 3);
  pthread_barrier_init(&g_fault_now, NULL, 3);
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, BurstAndFault, &g_thread_calls[i]);
  pthread_barrier_wait(&g_bursts_done);
  printf("about to die: two threads\n");
  fflush(stdout);
  fprintf(stderr, "calls %ld\n", g_thread_calls[0] + g_thread_calls[1]);
  pthread_barrier_wait(&g_fault_now);
  for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
  return 1;
}

/* CrashAtOnce: a fault within about a millisecond of the start, before
   the flusher has measured its clock (2 ms): the crash flush must still
   send the calls made. */
static int CrashAtOnce(void) {
  long sum = 0;
  for (int i = 0; i < 1000; ++i) sum += simtest_add(i, 2);
  t_calls += 1000;
  fprintf(stderr, "calls %ld (%ld)\n", t_calls, sum & 1);
  volatile int* null = NULL;
  *null = 1;
  return 1;
}

static void OnOwnSegv(int signal_number) {
  (void)signal_number;
  static const char caught[] = "caught SIGSEGV\n";
  (void)!write(STDOUT_FILENO, caught, sizeof(caught) - 1);
  _exit(9);
}

/* OwnHandler: what the program sees of SIGSEGV's disposition, then its own
   handler, then a fault: rlscope's crash handler must not show or interfere. */
static int OwnHandler(void) {
  struct sigaction old;
  sigaction(SIGSEGV, NULL, &old);
  printf("SIGSEGV disposition at start: %s\n", old.sa_handler == SIG_DFL ? "default" : "not default");
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = OnOwnSegv;
  sigaction(SIGSEGV, &action, NULL);
  Work(100);
  fflush(stdout);
  volatile int* null = NULL;
  *null = 1;
  return 1;
}

/* ChainHandler: signal() returns the handler it replaced, and a handler
   that chains calls it as a function; rlscope's crash handler must read
   as SIG_DFL here too, and if called must not leave the program re-faulting
   into its own handler for ever. */
static void (*g_replaced)(int);
static int g_chained;

static void OnChainedSegv(int signal_number) {
  if (++g_chained > 3) {
    static const char looping[] = "re-faulting in a loop\n";
    (void)!write(STDOUT_FILENO, looping, sizeof(looping) - 1);
    _exit(10);
  }
  if (g_replaced != SIG_DFL && g_replaced != SIG_IGN && g_replaced != SIG_ERR) {
    g_replaced(signal_number);
  } else {
    signal(signal_number, SIG_DFL);
    raise(signal_number);
  }
}

static int ChainHandler(void) {
  g_replaced = signal(SIGSEGV, OnChainedSegv);
  printf("signal() replaced: %s\n", g_replaced == SIG_DFL ? "default" : "not default");
  Work(100);
  fflush(stdout);
  volatile int* null = NULL;
  *null = 1;
  return 1;
}

static int Fork(void) {
  Work(50);
  fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    Work(200);
    printf("child done\n");
    fflush(stdout);
    exit(3);
  }
  Work(100);
  printf("child exited with %d\n", WaitChild(pid));
  return 0;
}

/* ForkStorm: `children` forks, one every 20 ms, while four threads make
   hooked calls (so a fork can land in the middle of anything the preload
   does); each child works 5 ms and exits. */
static void* ThreadWork(void* ms);

static int ForkStorm(int children) {
  pthread_t threads[4];
  for (int i = 0; i < 4; ++i) pthread_create(&threads[i], NULL, ThreadWork, (void*)(long)(children * 20 + 100));
  fflush(stdout);
  int failed = 0;
  for (int i = 0; i < children; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      Work(5);
      exit(0);
    }
    if (pid < 0 || WaitChild(pid) != 0) ++failed;
    usleep(20000);
  }
  for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
  printf("%d children, %d failed\n", children, failed);
  return failed == 0 ? 0 : 1;
}

static int ForkExec(void) {
  Work(50);
  fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    execl(g_self, g_self, "work", "200", "5", (char*)NULL);
    _exit(127);
  }
  printf("exec child exited with %d\n", WaitChild(pid));
  return 0;
}

static int Spawn(void) {
  Work(50);
  fflush(stdout);
  pid_t pid;
  char* argv[] = {(char*)g_self, "work", "200", "6", NULL};
  if (posix_spawn(&pid, g_self, NULL, NULL, argv, environ) != 0) return 1;
  printf("spawned child exited with %d\n", WaitChild(pid));
  return 0;
}

static void* ThreadWork(void* ms) {
  Work((long)ms);
  return NULL;
}

/* PeakRssKb: the process's peak resident memory (VmHWM), or -1. */
static long PeakRssKb(void) {
  FILE* status = fopen("/proc/self/status", "r");
  if (status == NULL) return -1;
  char line[256];
  long kb = -1;
  while (fgets(line, sizeof(line), status) != NULL) {
    if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
  }
  fclose(status);
  return kb;
}

static int Threads(int n, long ms, int one_at_a_time) {
  pthread_t* threads = calloc((size_t)n, sizeof(pthread_t));
  for (int i = 0; i < n; ++i) {
    if (pthread_create(&threads[i], NULL, ThreadWork, (void*)ms) != 0) return 1;
    if (one_at_a_time) pthread_join(threads[i], NULL);
  }
  if (!one_at_a_time) {
    for (int i = 0; i < n; ++i) pthread_join(threads[i], NULL);
  }
  free(threads);
  printf("%d threads done\n", n);
  /* stderr: the number differs between runs; the test reads it there. */
  fprintf(stderr, "vm_hwm_kb %ld\n", PeakRssKb());
  return 0;
}

static void* ExitFromThread(void* unused) {
  (void)unused;
  Work(150);
  printf("exiting from a thread\n");
  exit(7);
}

static int ThreadExit(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, ExitFromThread, NULL);
  Work(10000); /* Never finishes: the thread's exit() ends the process. */
  return 1;
}

static int Dlclose(const char* library) {
  for (int round = 0; round < 3; ++round) {
    void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
      printf("dlopen failed\n");
      return 1;
    }
    int (*add)(int, int) = (int (*)(int, int))dlsym(handle, "simtest_add");
    long sum = 0;
    for (int i = 0; i < 100000; ++i) sum += add(i, round);
    printf("round %d: %ld\n", round, sum);
    if (dlclose(handle) != 0) return 1;
  }
  return 0;
}

static volatile sig_atomic_t g_handled;

static void OnSignal(int signal_number) {
  (void)signal_number;
  /* A hooked function inside a handler, possibly interrupting another. */
  g_handled += simtest_add(1, 0);
}

static void* Pester(void* main_thread) {
  const long end = NowNs() + 100000000L;
  while (NowNs() < end) {
    pthread_kill(*(pthread_t*)main_thread, SIGUSR1);
    usleep(50);
  }
  return NULL;
}

static int Signals(long ms) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = OnSignal;
  action.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &action, NULL);
  sigaction(SIGUSR1, &action, NULL);
  struct itimerval every = {{0, 100}, {0, 100}}; /* As often as the kernel will. */
  setitimer(ITIMER_REAL, &every, NULL);
  pthread_t self = pthread_self(), pester;
  pthread_create(&pester, NULL, Pester, &self);
  Work(ms);
  pthread_join(pester, NULL);
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("signals %s\n", g_handled > 100 ? "handled" : "missing");
  return 0;
}

int main(int argc, char** argv) {
  g_self = argv[0];
  const char* mode = argc > 1 ? argv[1] : "";
  const char* arg = argc > 2 ? argv[2] : "0";
  const int is_work = strcmp(mode, "work") == 0;
  if (is_work || strcmp(mode, "calls") == 0) {
    const long amount = atol(arg);
    printf("working %ld %s\n", amount, is_work ? "ms" : "rounds");
    fflush(stdout);
    if (is_work) {
      Work(amount);
    } else {
      WorkRounds(amount);
    }
    printf("work done\n");
    return argc > 3 ? atoi(argv[3]) : 0;
  }
  if (strcmp(mode, "crash") == 0) return Crash(arg);
  if (strcmp(mode, "crash_at_once") == 0) return CrashAtOnce();
  if (strcmp(mode, "crash_two_threads") == 0) return CrashTwoThreads();
  if (strcmp(mode, "own_handler") == 0) return OwnHandler();
  if (strcmp(mode, "chain_handler") == 0) return ChainHandler();
  if (strcmp(mode, "fork") == 0) return Fork();
  if (strcmp(mode, "forkexec") == 0) return ForkExec();
  if (strcmp(mode, "fork_storm") == 0) return ForkStorm(atoi(arg));
  if (strcmp(mode, "spawn") == 0) return Spawn();
  if (strcmp(mode, "threads") == 0) return Threads(atoi(arg), 300, 0);
  if (strcmp(mode, "churn") == 0) return Threads(atoi(arg), 1, 1);
  if (strcmp(mode, "thread_exit") == 0) return ThreadExit();
  if (strcmp(mode, "dlclose") == 0) return Dlclose(arg);
  if (strcmp(mode, "signals") == 0) return Signals(atol(arg));
  fprintf(stderr, "usage: fault_program MODE [ARG]\n");
  return 2;
}
