// The machine the harnesses run on: topology (hwloc, or /sys as a fallback), HPU/APU roles, machine info.
#pragma once

#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mmgp::calib {

struct topology {
    std::string source;                   ///< "hwloc" or "sysfs"
    int packages = 0;
    std::vector<std::vector<int>> cores;  ///< per core, the OS numbers of its hardware contexts (PUs)
    int pus() const;
    int smt() const;                      ///< hardware contexts per core (the largest)
};
topology detect_topology();

/// Which hardware contexts play the host (HPU) and which cores the accelerators (APU, one context each).
struct roles {
    std::vector<int> hpu;  ///< OS CPU numbers of the HPU hardware contexts; hpu_contexts = hpu.size()
    std::vector<int> apu;  ///< OS CPU numbers of the APUs; apus = apu.size()
};
/// Default: the first max(1, cores/8) cores (all their contexts) are the host, one context of every other core is
/// an APU (2 cores: HPU = core 0, APU = core 1; 64 cores: 8 host cores, 56 APUs). With one core both share it.
roles default_roles(const topology& t);
/// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; throws std::invalid_argument on bad text or CPUs not in the topology.
std::vector<int> parse_cpu_list(const std::string& text, const topology& t);

/// CPU model, contexts, cores, SMT, load average, host name, date, kernel: a Google-Benchmark-like context.
nlohmann::json machine_info(const topology& t);

/// Pins the calling thread to one CPU; false when the kernel refuses (the harness then records a warning).
bool pin_current_thread(int cpu);

/// Iterations the off-load runtime's waiters spin before they block on a futex (kernels/runtime.hpp uses it as
/// spin_then_block_limit; `mmgp profile` writes it as application.spin_limit). Here so that the hand-back
/// harness (run_wake_busy) spins as long as the runtime without linking it.
inline constexpr long offload_spin_limit = 4000;

void futex_wait(std::atomic<std::uint32_t>* addr, std::uint32_t expected);
void futex_wake(std::atomic<std::uint32_t>* addr);

}  // namespace mmgp::calib
