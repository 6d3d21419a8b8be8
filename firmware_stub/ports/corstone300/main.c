/* The generic runner on the corstone300 (MPS3 AN547 silicon): the built-in operator benchmarks. */
#include "mculab/runner.h"

int main(int argc, char** argv) { return mculab_runner_main(argc, argv, 0); }
