// The harness programs' one body (harness_program.cpp), called by each program's main (harness_main.cpp).
#pragma once

#include <string>

namespace mmgp::calib {

/// The harness `which` (offload, gap, csw, alpha, dma or spin) as a program: parses its command line, measures,
/// prints or writes its JSON report. Returns the exit status (2: a bad command line, 1: a failed measurement).
int harness_program(const std::string& which, int argc, char** argv);

}  // namespace mmgp::calib
