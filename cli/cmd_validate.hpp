// mmgp validate (cmd_validate.cpp): its options and entry points, for main.cpp's command table.
#pragma once

#include "common.hpp"

namespace mmgp::cli {

struct validate_options {
    std::string file;
    std::string model = "mmgp";
    bool json = false;
    std::optional<double> max_mean, max_max;  ///< --max-mean-err, --max-err
    std::vector<std::string> sets;            ///< --set
};
void setup_validate(CLI::App& app, validate_options& o);
int run_validate(const validate_options& o);

}  // namespace mmgp::cli
