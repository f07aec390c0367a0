// mmgp models (cmd_models.cpp): its options and entry points, for main.cpp's command table.
#pragma once

#include "common.hpp"

namespace mmgp::cli {

struct models_options {
    bool json = false;
};
void setup_models(CLI::App& app, models_options& o);
int run_models(const models_options& o);

}  // namespace mmgp::cli
