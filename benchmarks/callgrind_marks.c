/* Callgrind's client requests for Python (through ctypes): benchmarks/bench_instructions.py builds this into a
   temporary directory. Outside valgrind each request is a few no-op instructions. */
#include <valgrind/callgrind.h>

void marks_toggle(void) { CALLGRIND_TOGGLE_COLLECT; }       /* this thread's counting, on or off */
void marks_zero(void) { CALLGRIND_ZERO_STATS; }             /* every thread's counts back to 0 */
void marks_dump(const char *label) { CALLGRIND_DUMP_STATS_AT(label); } /* what was counted, to a file */
