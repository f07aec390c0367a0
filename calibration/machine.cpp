#include "machine.hpp"
#include "mmgp/profile.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <pthread.h>
#include <sched.h>
#include <set>
#include <sstream>
#include <stdexcept>
#include <sys/utsname.h>
#include <unistd.h>

#ifdef MMGP_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace mmgp::calib {

int topology::pus() const {
    int n = 0;
    for (const auto& c : cores) n += static_cast<int>(c.size());
    return n;
}
int topology::smt() const {
    std::size_t s = 1;
    for (const auto& c : cores) s = std::max(s, c.size());
    return static_cast<int>(s);
}

namespace {

#ifdef MMGP_HAVE_HWLOC
bool from_hwloc(topology& t) {
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0) return false;
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return false;
    }
    t.source = "hwloc";
    t.packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    for (int i = 0; i < ncores; ++i) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
        std::vector<int> pus;
        int npu = hwloc_get_nbobjs_inside_cpuset_by_type(topo, core->cpuset, HWLOC_OBJ_PU);
        for (int k = 0; k < npu; ++k) {
            hwloc_obj_t pu = hwloc_get_obj_inside_cpuset_by_type(topo, core->cpuset, HWLOC_OBJ_PU, static_cast<unsigned>(k));
            pus.push_back(static_cast<int>(pu->os_index));
        }
        if (!pus.empty()) t.cores.push_back(pus);
    }
    hwloc_topology_destroy(topo);
    return !t.cores.empty();
}
#endif

bool from_sysfs(topology& t) {
    namespace fs = std::filesystem;
    std::map<std::pair<int, int>, std::vector<int>> by_core;
    std::set<int> pkgs;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/sys/devices/system/cpu", ec)) {
        std::string n = e.path().filename().string();
        if (n.size() < 4 || n.rfind("cpu", 0) != 0 || !std::all_of(n.begin() + 3, n.end(), ::isdigit)) continue;
        int cpu = std::stoi(n.substr(3));
        std::ifstream core(e.path() / "topology/core_id"), pkg(e.path() / "topology/physical_package_id");
        int c = cpu, p = 0;
        if (!(core >> c)) c = cpu;
        if (!(pkg >> p)) p = 0;
        by_core[{p, c}].push_back(cpu);
        pkgs.insert(p);
    }
    t.source = "sysfs";
    t.packages = static_cast<int>(pkgs.size());
    for (auto& [k, v] : by_core) {
        std::sort(v.begin(), v.end());
        t.cores.push_back(v);
    }
    std::sort(t.cores.begin(), t.cores.end());
    return !t.cores.empty();
}

}  // namespace

topology detect_topology() {
    topology t;
    bool ok = false;
#ifdef MMGP_HAVE_HWLOC
    ok = from_hwloc(t);
#endif
    if (!ok) {
        t = topology{};
        ok = from_sysfs(t);
    }
    if (!ok) {  // last resort: every CPU the process may run on is a core of its own
        t = topology{};
        t.source = "sched_getaffinity";
        t.packages = 1;
        for (int c : mmgp::available_cpus()) t.cores.push_back({c});
    }
    // Keep only the contexts this process may use (cgroups, taskset).
    const std::vector<int> cpus = mmgp::available_cpus();
    const std::set<int> allowed(cpus.begin(), cpus.end());
    if (!allowed.empty()) {
        std::vector<std::vector<int>> kept;
        for (auto& c : t.cores) {
            std::vector<int> k;
            for (int pu : c)
                if (allowed.count(pu)) k.push_back(pu);
            if (!k.empty()) kept.push_back(k);
        }
        if (!kept.empty()) t.cores = kept;
    }
    return t;
}

roles default_roles(const topology& t) {
    roles r;
    std::size_t n = t.cores.size();
    if (n == 0) return r;
    if (n == 1) {
        r.hpu = t.cores[0];
        r.apu = {t.cores[0].back()};
        return r;
    }
    std::size_t host = std::max<std::size_t>(1, n / 8);
    for (std::size_t i = 0; i < n; ++i) {
        if (i < host) r.hpu.insert(r.hpu.end(), t.cores[i].begin(), t.cores[i].end());
        else r.apu.push_back(t.cores[i].front());
    }
    return r;
}

std::vector<int> parse_cpu_list(const std::string& text, const topology& t) {
    std::set<int> known;
    for (const auto& c : t.cores) known.insert(c.begin(), c.end());
    std::vector<int> out;
    std::stringstream ss(text);
    std::string item;
    auto bad = [&](const std::string& why) { throw std::invalid_argument(why); };
    auto to_int = [&](const std::string& s) {
        if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), ::isdigit))
            bad("expected a CPU list like 0-3,8, found \"" + text + "\"");
        return std::stoi(s);
    };
    if (text.empty()) bad("expected a CPU list like 0-3,8, found an empty string");
    // getline drops a trailing empty item: "0," and ",0" and "0,,1" name an empty CPU (a typo, not a list).
    if (text.front() == ',' || text.back() == ',' || text.find(",,") != std::string::npos)
        bad("expected a CPU list like 0-3,8, found \"" + text + "\" (an empty item)");
    while (std::getline(ss, item, ',')) {
        auto dash = item.find('-');
        int lo = to_int(item.substr(0, dash));
        int hi = dash == std::string::npos ? lo : to_int(item.substr(dash + 1));
        if (lo > hi) bad("expected a CPU list like 0-3,8, found \"" + text + "\"");
        for (int c = lo; c <= hi; ++c) {
            if (!known.count(c)) bad("CPU " + std::to_string(c) + " is not one this process may use");
            if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
        }
    }
    if (out.empty()) bad("expected a CPU list like 0-3,8, found \"" + text + "\"");
    return out;
}

nlohmann::json machine_info(const topology& t) {
    nlohmann::json j;
    // The CPU model as mmgp::this_machine() reads it, so that predict's freshness check compares like with like.
    std::string model = mmgp::this_machine().cpu_model;
    if (model.empty()) model = "unknown";
    double mhz = 0;
    {
        std::ifstream f("/proc/cpuinfo");
        for (std::string line; std::getline(f, line);) {
            auto colon = line.find(':');
            if (colon == std::string::npos) continue;
            std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
            if (key == "cpu MHz") {
                mhz = std::atof(line.c_str() + colon + 1);
                break;
            }
        }
    }
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    utsname u{};
    uname(&u);
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) != 3) load[0] = load[1] = load[2] = -1;
    std::time_t now = std::time(nullptr);
    char date[64];
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&now));
    j["date"] = date;
    j["host_name"] = host;
    j["host_hash"] = mmgp::host_hash(host);  // what predict and fit compare (mmgp::platform_warnings)
    j["kernel"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
    j["cpu_model"] = model;
    j["mhz_per_cpu"] = mhz;
    j["num_cpus"] = t.pus();
    j["cores"] = static_cast<int>(t.cores.size());
    j["packages"] = t.packages;
    j["smt"] = t.smt();
    j["topology_source"] = t.source;
    j["load_avg"] = {load[0], load[1], load[2]};
    j["online_cpus"] = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    return j;
}

bool pin_current_thread(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

}  // namespace mmgp::calib
