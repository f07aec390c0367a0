// One calibration harness as a program of its own (MMGP_HARNESS is offload, gap, csw, alpha, dma or spin): the
// shared body (harness_program.cpp) is compiled once, this entry once per harness.
#include "harness_program.hpp"

#ifndef MMGP_HARNESS
#error "define MMGP_HARNESS"
#endif

int main(int argc, char** argv) { return mmgp::calib::harness_program(MMGP_HARNESS, argc, argv); }
