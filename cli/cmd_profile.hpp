// mmgp profile (cmd_profile.cpp): its options and entry points, for main.cpp's command table.
#pragma once

#include "common.hpp"

namespace mmgp::cli {

/// mmgp profile (offload/, built when libpll-dev is installed).
struct profile_options {
    std::string alignment, simulate, output, name;  ///< name: raxml-libpll, on cuda raxml-libpll-cuda
    std::string accelerator = "cpu";                ///< cpu (APU threads) or cuda (mmgp-offload-run's processes)
    std::string platform;                           ///< cuda: the platform the profile is for (C_apu less its charge)
    std::string policy = "edtlp";                   ///< cuda: how the runs' host waits for its grids (os: spins)
    bool quiet = false;
    std::optional<int> taxa, sites;  ///< --taxa, --sites (not given: all)
    int units = 16, repetitions = 5, rounds = 1, newton = 4;
    unsigned long seed = 1;
};
void setup_profile(CLI::App& app, profile_options& o);
int run_profile(const profile_options& o);

}  // namespace mmgp::cli
