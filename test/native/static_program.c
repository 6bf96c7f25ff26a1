/* static_program: linked statically, so the dynamic loader never runs and
   LD_PRELOAD cannot inject rlscope's preload (test/e2e/fork_e2e_test.py).
   A child running it never streams, whatever the machine's load: the
   parent's record of starting it is the only trace it leaves. */
int main(void) { return 0; }
