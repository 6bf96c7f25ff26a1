/* libsimleaf.so: found only through libsimloader.so's DT_RUNPATH. */
int simleaf_answer(void) { return 42; }
