#include "simulate.hpp"

#include "mmgp/io.hpp"
#include "mpi_driver.hpp"
#include "process.hpp"
#include "mmgp/error.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace mmgp::calib {

namespace {

namespace fs = std::filesystem;

/// Names ordered as a person counts them: node-2 before node-10.
bool natural_less(const std::string& a, const std::string& b) {
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
            std::size_t ie = i, je = j;
            while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
            while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
            const std::string na = a.substr(i, ie - i), nb = b.substr(j, je - j);
            if (na.size() != nb.size()) return na.size() < nb.size();
            if (na != nb) return na < nb;
            i = ie, j = je;
        } else {
            if (a[i] != b[j]) return a[i] < b[j];
            ++i, ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

std::string quoted(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

/// The first line of the hosts tool: "simgrid 3.32.0"; and the SMPI settings the cluster file's <config> changes, as
/// "key=value" (its "config KEY VALUE" lines).
std::string simgrid_version(const std::string& cluster, const std::string& tool, std::vector<std::string>& config) {
    std::string out;
    mmgp::run::shell(quoted(tool) + " " + quoted(cluster) + " 2>/dev/null", &out);
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("config ", 0) == 0) {
            const std::string kv = line.substr(7);
            const auto space = kv.find(' ');
            config.push_back(space == std::string::npos ? kv : kv.substr(0, space) + "=" + kv.substr(space + 1));
        }
    return out.rfind("simgrid ", 0) == 0 ? out.substr(8, out.find('\n') - 8) : "?";
}

/// One smpirun of the bench on the first `nodes` hosts, `ppn` ranks on each: the bench's JSON report.
nlohmann::json run_simulation(const simulate_settings& s, const std::string& bench, const std::vector<sim_host>& hosts,
                              int nodes, int ppn, const fs::path& dir) {
    const fs::path hostfile = dir / fmt::format("hosts-{}x{}", nodes, ppn);
    {
        std::ofstream f(hostfile);
        for (int n = 0; n < nodes; ++n)
            for (int k = 0; k < ppn; ++k) f << hosts[static_cast<std::size_t>(n)].name << '\n';
    }
    // Computation between the calls is not simulated (the bench's own loop would be timed on this machine);
    // the collectives' algorithms are SMPI's defaults (its "default" selector) unless the cluster file's <config>
    // sets them; either is written into the profile's notes.
    const std::string cmd = fmt::format(
        "smpirun -np {} -platform {} -hostfile {} --cfg=smpi/simulate-computation:no --log=root.thres:critical "
        "{} {} {} simulated 2>&1",
        nodes * ppn, quoted(s.cluster), quoted(hostfile.string()), quoted(bench), nodes, ppn);
    std::string out;
    const int rc = mmgp::run::shell(cmd, &out);
    if (mmgp::interrupt_pending()) throw mmgp::failure("interrupted");
    const auto brace = out.find("{\"nodes\"");
    // SMPI stopping on the cluster itself (no path between two hosts, a link it cannot use): the file's error.
    if (const auto critical = out.find("[root/CRITICAL] "); rc != 0 && critical != std::string::npos) {
        const std::string why = out.substr(critical + 16, out.find('\n', critical) - critical - 16);
        throw cluster_error(fmt::format("{}: expected a cluster SMPI can simulate with nodes={} ppn={}, found: {}",
                                        s.cluster, nodes, ppn, why));
    }
    if (rc != 0 || brace == std::string::npos) {
        std::string last = out.substr(0, out.find('\n'));
        throw mmgp::failure(fmt::format("smpirun failed (status {}) for nodes={} ppn={}: {}", rc, nodes, ppn, last));
    }
    return nlohmann::json::parse(out.substr(brace, out.find('\n', brace) - brace));
}

}  // namespace

std::vector<sim_host> cluster_hosts(const std::string& cluster, const std::string& hosts_tool) {
    std::string out;
    const int rc = mmgp::run::shell(quoted(hosts_tool) + " " + quoted(cluster) + " 2>&1", &out);
    if (rc != 0) {
        std::string msg = out.substr(0, out.find('\n'));
        if (msg.rfind("error: ", 0) == 0) msg = msg.substr(7);
        throw cluster_error(fmt::format("{}: expected a SimGrid platform file, found one SimGrid cannot read ({})",
                                        cluster, msg.empty() ? fmt::format("status {}", rc) : msg));
    }
    std::vector<sim_host> hosts;
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("simgrid ", 0) == 0 || line.rfind("config ", 0) == 0) continue;
        std::istringstream row(line);
        sim_host h;
        if (row >> h.name >> h.cores) hosts.push_back(h);
    }
    std::stable_sort(hosts.begin(), hosts.end(), [](const sim_host& a, const sim_host& b) { return natural_less(a.name, b.name); });
    return hosts;
}

std::vector<int> simulated_node_counts(int lo, int hi) {
    std::vector<int> counts;
    int n = 1;
    while (n < lo) n *= 2;
    if (n != lo) counts.push_back(lo);
    for (; n < hi; n *= 2) counts.push_back(n);
    counts.push_back(hi);
    return counts;
}

bool simulator_built() {
    return !run::find_program("", "MMGP_MPI_BENCH_SMPI", "mmgp-mpi-bench-smpi").empty() &&
           !run::find_program("", "MMGP_SIMGRID_HOSTS", "mmgp-simgrid-hosts").empty();
}

nlohmann::json simulate_network(const simulate_settings& s) {
    const std::string bench = run::find_program(s.bench, "MMGP_MPI_BENCH_SMPI", "mmgp-mpi-bench-smpi");
    const std::string tool = run::find_program(s.hosts_tool, "MMGP_SIMGRID_HOSTS", "mmgp-simgrid-hosts");
    if (bench.empty() || tool.empty())
        throw mmgp::failure("the simulator is not built: install SimGrid (apt-get install libsimgrid-dev, "
                                 "scripts/setup.sh) and rebuild");
    if (run::find_program("", "MMGP_SMPIRUN", "smpirun").empty())
        throw cluster_error("PATH: expected SimGrid's smpirun on it (the simulator is built; its launcher is not found)");
    const std::vector<sim_host> hosts = cluster_hosts(s.cluster, tool);
    if (static_cast<int>(hosts.size()) < s.nodes_hi)
        throw cluster_error(fmt::format("{}: expected at least {} hosts (--nodes), found {}", s.cluster, s.nodes_hi,
                                        hosts.size()));
    std::vector<std::string> config;
    const std::string version = simgrid_version(s.cluster, tool, config);
    std::error_code tmp_ec;
    const fs::path tmp = fs::temp_directory_path(tmp_ec);
    if (tmp_ec)
        throw cluster_error(fmt::format("TMPDIR: expected a directory for the simulation's host files, found \"{}\" ({})",
                                        std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "", tmp_ec.message()));
    const fs::path dir = tmp / fmt::format("mmgp-simulate-{}", static_cast<int>(getpid()));
    fs::create_directories(dir, tmp_ec);
    if (tmp_ec)
        throw cluster_error(fmt::format("TMPDIR: expected a directory the simulation's host files can be written in, found "
                                        "\"{}\" ({})", tmp.string(), tmp_ec.message()));
    nlohmann::json tables = nlohmann::json::array(), runs = nlohmann::json::array();
    try {
        for (int nodes : simulated_node_counts(s.nodes_lo, s.nodes_hi))
            for (int ppn = 1; ppn <= s.ppn_max; ++ppn) {
                if (nodes * ppn < 2) continue;
                if (s.progress) s.progress(fmt::format("simulate: nodes={} ppn={} ({} ranks)", nodes, ppn, nodes * ppn));
                const nlohmann::json r = run_simulation(s, bench, hosts, nodes, ppn, dir);
                for (auto& t : tables_from_bench(r, nodes, ppn)) tables.push_back(std::move(t));
                runs.push_back({{"nodes", nodes}, {"ppn", ppn}, {"simulated", true}});
            }
    } catch (...) {
        std::error_code ec;
        fs::remove_all(dir, ec);
        mmgp::finish_interrupt();
        throw;
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    const std::string source = fmt::format("simulated: {}, SimGrid {}", fs::path(s.cluster).filename().string(), version);
    for (auto& t : tables) t["source"] = source;
    std::string settings = "collectives by SMPI's default algorithms";
    if (!config.empty()) {
        settings = "SMPI settings of the file's <config>: ";
        for (std::size_t i = 0; i < config.size(); ++i) settings += (i ? ", " : "") + config[i];
        settings += "; the rest SMPI's defaults";
    }
    nlohmann::json notes = nlohmann::json::array(
        {fmt::format("every table simulated by SimGrid {} (SMPI) on {}: ranks placed {} per host on the file's first "
                     "hosts; computation between calls not simulated; {}; no OS noise, no contention from other jobs",
                     version, s.cluster, "ppn", settings),
         "sendrecv: one-way time of a ping-pong between rank 0 and the last rank; allreduce, reduce (to rank 0), "
         "bcast (from rank 0): largest per-rank time of one call (MPI_SUM on bytes/8 doubles)"});
    return {{"tables", tables},
            {"measurements", {{"harness", "mmgp-mpi-bench (SMPI)"}, {"simulator", "SimGrid " + version},
                              {"cluster", s.cluster}, {"runs", runs}}},
            {"notes", notes}};
}

nlohmann::json simulated_platform(nlohmann::json node, const nlohmann::json& network, const simulate_settings& s,
                                  const std::string& name) {
    node["network"] = network;
    node["nodes"] = {{"value", s.nodes_hi},
                     {"source", fmt::format("calibrate --simulate: the network tables were simulated on {} to {} nodes "
                                            "of {}",
                                            s.nodes_lo, s.nodes_hi, s.cluster)}};
    if (!name.empty()) node["name"] = name;
    const std::string was = node.value("description", std::string());
    node["description"] = fmt::format("{}{}Network simulated by SimGrid SMPI on {} ({}-{} nodes, 1-{} processes per node).",
                                      was, was.empty() ? "" : " ", s.cluster, s.nodes_lo, s.nodes_hi, s.ppn_max);
    return node;
}

}  // namespace mmgp::calib
