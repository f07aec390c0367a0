#include "mpi_driver.hpp"

#include "mmgp/io.hpp"
#include "process.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <stdexcept>
#include <unistd.h>
#include <vector>

namespace mmgp::calib {

namespace {

namespace fs = std::filesystem;

/// Runs a shell command in a process group of its own (an interrupt kills it); returns its exit status and
/// (optionally) its standard output.
int sh(const std::string& cmd, std::string* out = nullptr) { return mmgp::run::shell(cmd, out); }

bool have(const std::string& prog) { return sh("command -v " + prog + " >/dev/null 2>&1") == 0; }

/// Whether a network namespace can be made here (a chroot or a container may have ip(8) but not the mounts it needs).
bool netns_works() {
    const std::string probe = fmt::format("mmgp{}probe", static_cast<int>(getpid()) % 10000000);
    // `ip -n` enters the namespace (a mount namespace of its own: what fails in a chroot), as the set-up does.
    const int rc = sh("ip netns add " + probe + " >/dev/null 2>&1 && ip -n " + probe + " link set lo up >/dev/null 2>&1");
    sh("ip netns del " + probe + " >/dev/null 2>&1");
    return rc == 0;
}

std::string find_bench(const mpi_settings& s) {
    if (!s.bench.empty()) return s.bench;
    if (const char* e = std::getenv("MMGP_MPI_BENCH")) return e;
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        for (fs::path c : {self.parent_path() / ".." / "calibration" / "mmgp-mpi-bench",
                           self.parent_path() / "mmgp-mpi-bench"})
            if (fs::exists(c, ec)) return fs::weakly_canonical(c, ec).string();
    }
    std::string out;
    if (sh("command -v mmgp-mpi-bench", &out) == 0 && !out.empty()) return out.substr(0, out.find('\n'));
    return "";
}

/// Network namespaces mmgp<pid>n<i> with addresses 10.77.<x>.<i+1>, joined by veth pairs to a bridge in the
/// caller's namespace (10.77.<x>.254, where mpirun's daemon listens). Removed by the destructor.
class netns_cluster {
public:
    netns_cluster(int nodes, int ppn, int cores) : nodes_(nodes) {
        int pid = static_cast<int>(getpid());
        prefix_ = fmt::format("mmgp{}", pid % 10000000);
        subnet_ = fmt::format("10.77.{}", 20 + pid % 200);
        bridge_ = prefix_ + "br";
        live_ = true;
        try {
            setup(ppn, cores);
        } catch (...) {  // an interrupt or a failing command half-way: remove what was made
            cleanup();
            throw;
        }
    }
    ~netns_cluster() { cleanup(); }
    netns_cluster(const netns_cluster&) = delete;
    netns_cluster& operator=(const netns_cluster&) = delete;

    std::string name(int i) const { return prefix_ + "n" + std::to_string(i); }
    std::string host(int i) const { return subnet_ + "." + std::to_string(i + 1); }
    std::string mpirun_args(int ppn) const {
        std::string hosts;
        for (int i = 0; i < nodes_; ++i) {
            if (i) hosts += ',';
            hosts += fmt::format("{}:{}", host(i), ppn);
        }
        return fmt::format("--host {} --bind-to none --mca plm_rsh_agent {} --mca plm_rsh_no_tree_spawn 1 "
                           "--mca btl self,vader,tcp --mca btl_tcp_if_include {}.0/24 --mca oob_tcp_if_include {}.0/24",
                           hosts, agent_, subnet_, subnet_);
    }
    const std::string& link() const { return link_; }

private:
    void setup(int ppn, int cores) {
        run(fmt::format("ip link add {0} type bridge && ip addr add {1}.254/24 dev {0} && ip link set {0} up", bridge_,
                        subnet_));
        for (int i = 0; i < nodes_; ++i) {
            std::string ns = name(i), veth = prefix_ + "v" + std::to_string(i);
            run(fmt::format("ip netns add {0} && ip link add {1} type veth peer name eth0 netns {0} && "
                            "ip link set {1} master {2} up && ip -n {0} addr add {3}/24 dev eth0 && "
                            "ip -n {0} link set eth0 up && ip -n {0} link set lo up",
                            ns, veth, bridge_, host(i)));
            // GigE-like link: netem (25 us each way, 1 Gbit/s) when the kernel has it, else tbf (1 Gbit/s only).
            if (sh(fmt::format("tc -n {} qdisc add dev eth0 root netem delay 25us rate 1gbit >/dev/null 2>&1", ns)) == 0)
                link_ = "veth + bridge, netem 25 us one way per namespace + 1 Gbit/s";
            else if (sh(fmt::format("tc -n {} qdisc add dev eth0 root tbf rate 1gbit burst 256kb latency 50ms "
                                    ">/dev/null 2>&1", ns)) == 0)
                link_ = "veth + bridge, tbf 1 Gbit/s (no netem in this kernel: no added latency)";
            else
                link_ = "veth + bridge, unshaped";
        }
        // mpirun's rsh agent: "agent [options] HOST COMMAND" runs COMMAND in HOST's namespace, on its own cores.
        dir_ = fs::temp_directory_path() / (prefix_ + "-mpi");
        fs::create_directories(dir_);
        agent_ = (dir_ / "agent.sh").string();
        std::ofstream a(agent_);
        a << "#!/bin/sh\n# mpirun plm_rsh_agent generated by mmgp calibrate --mpi\n"
             "while [ $# -gt 0 ]; do case \"$1\" in -*) shift;; *) break;; esac; done\n"
             "host=$1; shift\ncase \"$host\" in\n";
        for (int i = 0; i < nodes_; ++i) {
            std::string cpus;
            for (int k = 0; k < ppn; ++k) {
                if (k) cpus += ',';
                cpus += std::to_string((i * ppn + k) % cores);
            }
            a << "  " << host(i) << ") ns=" << name(i) << "; cpus=" << cpus << ";;\n";
        }
        a << "  *) echo \"agent: unknown host $host\" >&2; exit 255;;\nesac\n"
             "exec ip netns exec \"$ns\" taskset -c \"$cpus\" /bin/sh -c \"$*\"\n";
        a.close();
        fs::permissions(agent_, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
    }
    void cleanup() {
        if (!live_) return;
        live_ = false;
        for (int i = 0; i < nodes_; ++i) sh("ip netns del " + name(i) + " >/dev/null 2>&1");
        sh("ip link del " + bridge_ + " >/dev/null 2>&1");
        std::error_code ec;
        if (!dir_.empty()) fs::remove_all(dir_, ec);
    }
    void run(const std::string& cmd) {
        if (sh(cmd + " 2>&1") != 0) throw std::runtime_error("cannot set up network namespaces: " + cmd);
    }
    int nodes_;
    bool live_ = false;
    std::string link_, prefix_, subnet_, bridge_, agent_;
    fs::path dir_;
};

struct distribution {
    int nodes, ppn;
};

}  // namespace

nlohmann::json tables_from_bench(const nlohmann::json& r, int nodes, int ppn) {
    nlohmann::json tables = nlohmann::json::array();
    for (const char* prim : {"allreduce", "reduce", "bcast", "sendrecv"}) {
        if (!r.contains("tables") || !r["tables"].contains(prim)) continue;
        nlohmann::json pts = nlohmann::json::array(), st = nlohmann::json::array();
        for (const auto& p : r["tables"][prim]) {
            pts.push_back({p.at(0), p.at(1)});
            st.push_back({{"bytes", p.at(0)}, {"median", p.at(1)}, {"mad", p.at(2)}, {"cv", p.at(3)}});
        }
        if (pts.empty()) continue;
        tables.push_back({{"primitive", prim},
                          {"nodes", nodes},
                          {"ppn", ppn},
                          {"points", pts},
                          {"statistics", {{"repetitions", r.value("repetitions", 0)},
                                          {"harness", std::string("mpi/") + prim},
                                          {"per_point", st}}}});
    }
    return tables;
}

nlohmann::json measure_network(const mpi_settings& s) {
    std::string bench = find_bench(s);
    if (bench.empty()) throw std::runtime_error("mmgp-mpi-bench not found (build with OpenMPI installed, or set MMGP_MPI_BENCH)");
    if (!have("mpirun")) throw std::runtime_error("mpirun not found (apt-get install openmpi-bin libopenmpi-dev)");
    bool ns_ok = s.namespaces && geteuid() == 0 && have("ip") && have("taskset") && netns_works();
    std::vector<distribution> dists;
    if (s.cores >= 2) dists.push_back({1, 2});
    if (s.cores >= 4) dists.push_back({1, 4});
    if (ns_ok && s.cores >= 2) dists.push_back({2, 1});
    if (ns_ok && s.cores >= 4) dists.push_back({2, 2});
    if (ns_ok && s.cores >= 4) dists.push_back({4, 1});
    if (dists.empty()) throw std::runtime_error("MPI needs at least 2 cores");

    nlohmann::json tables = nlohmann::json::array(), runs = nlohmann::json::array();
    nlohmann::json notes = nlohmann::json::array();
    if (!ns_ok)
        notes.push_back("no multi-node tables: emulating nodes needs root, ip(8), taskset(1) and network namespaces "
                        "that can be made here (ip netns add)");
    try {
        for (const auto& d : dists) {
            if (s.progress) s.progress(fmt::format("mpi: nodes={} ppn={} ({} processes)", d.nodes, d.ppn, d.nodes * d.ppn));
            std::string out, cmd;
            std::unique_ptr<netns_cluster> cluster;
            std::string base = "timeout 300 mpirun --allow-run-as-root -np " + std::to_string(d.nodes * d.ppn);
            if (d.nodes == 1) {
                cmd = fmt::format("{} --bind-to core {} 1 {} {} 2>/dev/null", base, bench, d.ppn, s.quick ? "quick" : "full");
            } else {
                cluster = std::make_unique<netns_cluster>(d.nodes, d.ppn, s.cores);
                cmd = fmt::format("{} {} {} {} {} {} 2>/dev/null", base, cluster->mpirun_args(d.ppn), bench, d.nodes,
                                  d.ppn, s.quick ? "quick" : "full");
            }
            int rc = sh(cmd, &out);
            if (mmgp::interrupt_pending()) throw std::runtime_error("interrupted");
            if (rc != 0) throw std::runtime_error(fmt::format("mpirun failed (status {}) for nodes={} ppn={}", rc, d.nodes, d.ppn));
            nlohmann::json r = nlohmann::json::parse(out.substr(out.find('{')));
            for (auto& t : tables_from_bench(r, d.nodes, d.ppn)) tables.push_back(std::move(t));
            runs.push_back({{"nodes", d.nodes}, {"ppn", d.ppn}, {"emulated_nodes", d.nodes > 1},
                            {"link", d.nodes > 1 ? cluster->link() : std::string("shared memory")}});
        }
    } catch (...) {
        mmgp::finish_interrupt();  // the namespaces of the interrupted run are gone by now: end by the signal
        throw;
    }
    if (ns_ok)
        notes.push_back("multi-node tables come from network namespaces on one machine joined by veth pairs and a "
                        "bridge (tc netem, for added latency, is used only when the kernel provides it)");
    notes.push_back("sendrecv: one-way time of a ping-pong between rank 0 and the last rank; allreduce, reduce (to "
                    "rank 0), bcast (from rank 0): largest per-rank mean of the call (MPI_SUM on bytes/8 doubles); "
                    "medians over repetitions");
    return {{"tables", tables},
            {"measurements", {{"harness", "mmgp-mpi-bench"}, {"mpi", "OpenMPI (mpirun)"}, {"runs", runs}}},
            {"notes", notes}};
}

}  // namespace mmgp::calib
