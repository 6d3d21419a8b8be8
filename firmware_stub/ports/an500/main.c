/* The generic runner on the an500: the built-in operator benchmarks. */
#include "mculab/runner.h"

int main(int argc, char** argv) { return mculab_runner_main(argc, argv, 0); }
