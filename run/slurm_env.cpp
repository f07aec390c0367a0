// The Slurm allocation of this process's environment (slurm_env.hpp): read by mmgp tune's backends (tune_slurm_steps.cpp,
// tune_local.cpp) and by mmgp launch and the tune's report (cli/cmd_launch.cpp; tune_srun_node_cpus: cli/tune_report.cpp).
#include "slurm_env.hpp"

#include <algorithm>
#include <cstdlib>

namespace mmgp::run {

namespace {

constexpr long largest_count = 1L << 20;  // a node's CPUs, and the nodes in all: far past a real allocation's

// A count in [1, largest_count] written with digits alone at `text` (no sign, no space: strtol would take them);
// `end` past it. 0 when there is none.
long count_at(const char* text, const char** end) {
    if (*text < '0' || *text > '9') return 0;
    char* e = nullptr;
    const long n = std::strtol(text, &e, 10);
    *end = e;
    return n >= 1 && n <= largest_count ? n : 0;
}

}  // namespace

std::vector<int> parse_cpus_per_node(const std::string& text) {
    std::vector<int> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t comma = text.find(',', pos);
        const std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        const char* end = nullptr;
        const long n = count_at(part.c_str(), &end);
        if (n == 0) return {};
        long times = 1;
        if (*end == '(') {
            if (end[1] != 'x') return {};
            const char* e2 = nullptr;
            times = count_at(end + 2, &e2);
            if (times == 0 || *e2 != ')' || e2[1] != '\0') return {};
        } else if (*end != '\0') {
            return {};
        }
        if (times > largest_count - static_cast<long>(out.size())) return {};
        for (long i = 0; i < times; ++i) out.push_back(static_cast<int>(n));
        if (comma == std::string::npos) return out;
        pos = comma + 1;
    }
    return {};  // empty, or a comma with nothing after it
}

int allocation_cpus::fewest() const { return cpus.empty() ? 0 : *std::min_element(cpus.begin(), cpus.end()); }

std::optional<allocation_cpus> allocation_from_environment() {
    const char* job = std::getenv("SLURM_JOB_ID");
    const char* cpn = std::getenv("SLURM_JOB_CPUS_PER_NODE");
    if (!job || !*job || !cpn) return std::nullopt;
    allocation_cpus a{job, parse_cpus_per_node(cpn)};
    if (a.cpus.empty()) return std::nullopt;
    return a;
}

std::optional<int> tune_srun_node_cpus(bool srun, bool oversubscribe) {
    if (!srun || !oversubscribe) return std::nullopt;
    const std::optional<allocation_cpus> a = allocation_from_environment();
    return a ? std::optional<int>(a->fewest()) : std::nullopt;
}

}  // namespace mmgp::run
