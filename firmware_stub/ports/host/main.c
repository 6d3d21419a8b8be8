/* The generic runner as a Linux process: the built-in operator benchmarks; argv[1] is the
 * workload file. */
#include "mculab/runner.h"

int main(int argc, char** argv) { return mculab_runner_main(argc, argv, NULL); }
