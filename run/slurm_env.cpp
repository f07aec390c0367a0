// The Slurm allocation of this process's environment (slurm_env.hpp): read by mmgp tune's backends and mmgp launch.
#include "slurm_env.hpp"

#include <algorithm>
#include <cstdlib>

namespace mmgp::run {

std::vector<int> parse_cpus_per_node(const std::string& text) {
    std::vector<int> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t comma = text.find(',', pos);
        const std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        char* end = nullptr;
        const long n = std::strtol(part.c_str(), &end, 10);
        if (end == part.c_str() || n < 1 || n > 1 << 20) return {};
        long times = 1;
        if (*end == '(') {
            if (end[1] != 'x') return {};
            char* e2 = nullptr;
            times = std::strtol(end + 2, &e2, 10);
            if (e2 == end + 2 || *e2 != ')' || e2[1] != '\0' || times < 1 || times > 1 << 20) return {};
        } else if (*end != '\0') {
            return {};
        }
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

}  // namespace mmgp::run
