// mmgp predict (cmd_predict.cpp): its options and entry points, for main.cpp's command table.
#pragma once

#include <optional>

#include "common.hpp"
#include "cost.hpp"

namespace mmgp::cli {

struct predict_options {
    std::string profile, plot;
    space_options_cli space;
    objective_options_cli goal;  ///< --objective, --within, --max-nodes, --budget
    std::optional<double> tolerance;  ///< --tolerance (not given: the scenario's)
    bool json = false, csv = false, uncertainty = false;
    std::optional<int> top;  ///< --top (not given: 15)
};
void setup_predict(CLI::App& app, predict_options& o);
int run_predict(const predict_options& o);

}  // namespace mmgp::cli
