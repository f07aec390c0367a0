// mmgp calibrate: runs the harnesses, fits the parameters and builds a platform profile (schema mmgp/1).
#pragma once

#include <functional>
#include <stdexcept>
#include <nlohmann/json.hpp>
#include <string>

#include "harness.hpp"

namespace mmgp::calib {

struct calibrate_settings {
    bool quick = false;
    bool mpi = false;
    std::string hpu_cpus, apu_cpus;  ///< CPU lists; empty: default_roles()
    double cv_threshold = 0.10;
    std::string name;                ///< profile name; empty: "host-<hostname>"
    bool time_shared = false;        ///< describe HPU/APU threads as software threads time-sharing the cores
    int max_threads = 0;             ///< time_shared: the bound on m*p written as `apus`; 0: 4 x cores
    std::function<void(const std::string&)> progress;
};

/// Roles from CPU-list options (either may be empty); throws std::invalid_argument for bad or overlapping lists.
roles resolve_roles(const topology& t, const std::string& hpu, const std::string& apu);

/// Runs every harness and returns the platform profile. Throws mmgp::failure when a harness fails.
nlohmann::json calibrate_platform(const calibrate_settings& s);

/// A GPU node's host roles: every context this process may use (or the CPU list `hpu`, which may name them all)
/// is a host context, and no CPU is an accelerator (the SMs are). Throws std::invalid_argument for a bad list.
roles gpu_host_roles(const topology& t, const std::string& hpu);

/// The host half of a GPU node's platform (mmgp calibrate --accelerator cuda): hpu_contexts = the host roles'
/// contexts, T_csw and α measured on them; no CPU off-load, gap or transfer harness runs (the GPU harness measures
/// those, gpu_describe.hpp). Throws mmgp::failure when a harness fails.
nlohmann::json calibrate_gpu_host(const calibrate_settings& s);

/// The platform's `nodes` for a measured network section: the most nodes any of its tables was measured on
/// (calibrate --mpi: the emulated nodes), 1 without tables.
int nodes_of_network(const nlohmann::json& network);

/// The fitted alpha as a profile value ({"linear": {...}} or {"constant": ...}) with its measurements.
nlohmann::json alpha_json(const alpha_result& a);
/// The fitted link {"latency_s": ..., "bandwidth_Bps": ..., "measurements": ...}.
nlohmann::json dma_json(const dma_result& d);

/// A calibrated profile lacks what describe_time_shared() needs: pointer() is the JSON pointer of the missing
/// or malformed member (e.g. /measurements/csw_futex).
class incomplete_profile : public std::invalid_argument {
public:
    incomplete_profile(std::string pointer, const std::string& what, std::string found = "nothing of that shape")
        : std::invalid_argument(what), pointer_(std::move(pointer)), found_(std::move(found)) {}
    const std::string& pointer() const noexcept { return pointer_; }
    /// What the member holds instead ("nothing of that shape" where it is missing).
    const std::string& found() const noexcept { return found_; }

private:
    std::string pointer_, found_;
};

/// --time-shared: rewrites a calibrated profile (with measurements.offload_spin, offload_futex, csw_futex,
/// spin_pause and sched_slice, and machine.cores) so that it describes HPU and APU threads as unpinned software
/// threads time-sharing the cores: cores, hpu_contexts = cores, apus = max_threads (0: 4 x cores), T_wake,
/// T_csw = the futex hand-off, spin_pause, sched_slice (omitted when unmeasurable), T_wake_busy, each derivation
/// recorded in "_derivation". Applying it to a profile it already rewrote gives the same profile as applying it
/// once (only max_threads may change). Throws incomplete_profile when a needed measurement is missing.
void describe_time_shared(nlohmann::json& profile, int max_threads);


}  // namespace mmgp::calib
