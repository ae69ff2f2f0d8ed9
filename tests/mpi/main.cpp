// The MPI tests' runner: this process is no rank itself; its cases start mpirun.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
