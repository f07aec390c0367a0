// mmgp fit (cmd_fit.cpp): its options and entry points, for main.cpp's command table.
#pragma once

#include "common.hpp"

namespace mmgp::cli {

struct fit_options_cli {
    std::string file, platform, output, decomposition, scaling = "strong", policy, name = "fitted";  ///< empty: chosen
    std::optional<double> N;  ///< --N (not given: 1, or fitted with --fit-N)
    double N_start = 0.0;
    std::optional<double> waits_per_offload;  ///< --waits-per-offload (not given: fitted to time-sliced runs, else 1)
    bool fit_N = false, fit_T_start = false, json = false;
    std::string spin_limit;  ///< --spin-limit (empty: not given)
    std::vector<std::string> fix;
    std::vector<std::string> sets;  ///< --set platform.KEY=VALUE
    double max_age_days = 90;       ///< --max-age
    double noise_pct = 20.0;        ///< --noise: the run-to-run noise the structure selection assumes
};
void setup_fit(CLI::App& app, fit_options_cli& o);
int run_fit(const fit_options_cli& o);

}  // namespace mmgp::cli
