// Freshness of a calibrated platform: is it this machine's, recent, and measured often enough?
// platform_warnings() is pure; this_machine(), available_cpus() and utc_now() are the I/O edges that read the
// machine and the clock (utc_now(): the date written into provenance and journals).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sched.h>
#include <unistd.h>

#include "base/format.hpp"
#include "mmgp/profile.hpp"

namespace mmgp {

std::string host_hash(const std::string& host_name) {
    std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits
    for (unsigned char c : host_name) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    char out[17];
    std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
    return out;
}

machine_fingerprint this_machine() {
    machine_fingerprint m;
    char host[256] = {0};
    if (gethostname(host, sizeof host - 1) == 0) m.host_hash = host_hash(host);
    std::ifstream f("/proc/cpuinfo");
    for (std::string line; std::getline(f, line);) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
        if (key == "model name" || key == "cpu" || key == "Model") {
            m.cpu_model = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
            break;
        }
    }
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    m.cores = n > 0 ? static_cast<int>(n) : 0;
    return m;
}

std::vector<int> available_cpus() {
    std::vector<int> out;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int i = 0; i < CPU_SETSIZE; ++i)
            if (CPU_ISSET(i, &set)) out.push_back(i);
    return out;
}

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

namespace {
// Days since 1970 of an ISO 8601 date's YYYY-MM-DD, or false when it does not start with one.
bool days_of(const std::string& date, std::int64_t& days) {
    int y = 0;
    unsigned mo = 0, d = 0;
    if (date.size() < 10 || std::sscanf(date.c_str(), "%4d-%2u-%2u", &y, &mo, &d) != 3) return false;
    const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{mo}, std::chrono::day{d}};
    if (!ymd.ok()) return false;
    days = std::chrono::sys_days{ymd}.time_since_epoch().count();
    return true;
}
}  // namespace

std::vector<std::string> platform_warnings(const platform& pl, const machine_fingerprint& here, std::int64_t now_unix,
                                           const freshness_policy& policy) {
    std::vector<std::string> out;
    const platform_provenance& p = pl.provenance;
    if (!p.calibrated) return out;
    const std::string who = "platform " + (pl.name.empty() ? std::string("(unnamed)") : pl.name);
    std::vector<std::string> differ;
    if (!p.host_hash.empty() && !here.host_hash.empty() && p.host_hash != here.host_hash) differ.push_back("host");
    if (!p.cpu_model.empty() && !here.cpu_model.empty() && p.cpu_model != here.cpu_model)
        differ.push_back("CPU " + p.cpu_model + ", here " + here.cpu_model);
    if (p.cores > 0 && here.cores > 0 && p.cores != here.cores)
        differ.push_back(std::to_string(p.cores) + " cores, here " + std::to_string(here.cores));
    if (!differ.empty()) {
        std::string why;
        for (const auto& d : differ) why += (why.empty() ? "" : "; ") + d;
        out.push_back(who + " was calibrated on another machine (" + why + "): recalibrate with mmgp calibrate");
    }
    std::int64_t then = 0;
    if (!p.date.empty() && days_of(p.date, then)) {
        const double age = static_cast<double>(now_unix) / 86400.0 - static_cast<double>(then);
        if (age > policy.max_age_days)
            out.push_back(who + " was calibrated " + std::to_string(static_cast<long long>(age)) + " days ago (" +
                          p.date.substr(0, 10) + "), more than " + detail::format_double(policy.max_age_days) +
                          " days: recalibrate with mmgp calibrate");
    }
    if (p.min_repetitions > 0 && p.min_repetitions < policy.min_repetitions)
        out.push_back(who + " rests on " + std::to_string(p.min_repetitions) +
                      " repetition(s) for some parameter, fewer than " + std::to_string(policy.min_repetitions));
    for (const auto& f : p.flagged) out.push_back(who + ": " + f);
    return out;
}

}  // namespace mmgp
