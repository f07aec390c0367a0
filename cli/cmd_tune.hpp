// mmgp tune (cmd_tune.cpp and the tune_* files): its entry points, for main.cpp's command table; its options
// in tune_options.hpp.
#pragma once

#include "tune_options.hpp"

namespace mmgp::cli {

void setup_tune(CLI::App& app, tune_options_cli& o);
int run_tune(const tune_options_cli& o);

}  // namespace mmgp::cli
