/* The generic runner on the stm32h7 boards: the built-in operator benchmarks. */
#include "mculab/runner.h"

int main(int argc, char** argv) { return mculab_runner_main(argc, argv, 0); }
