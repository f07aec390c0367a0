// No lost data, and Ctrl-C that works: `mmgp calibrate`, `mmgp profile` and `mmgp fit`, signalled while
// they are measuring (or reading their input), stop within 1 s by the signal, say which file they left
// as it was, leave it byte-identical and leave no temporary file behind. The signal is sent only once the
// command is provably at work (its first progress line on stderr, or its open of a FIFO input), so a
// command that ignored the signal would finish normally and fail the test.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <functional>
#include <poll.h>
#include <pty.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "support.hpp"

extern char** environ;

namespace {

using clk = std::chrono::steady_clock;

using mmgp::test::sanitized;  // a sanitized mmgp-mpi-bench aborts in MPI_Finalize

#ifdef MMGP_HAVE_KERNELS
constexpr bool have_profile = true;
#else
constexpr bool have_profile = false;
#endif

const char* sig_name(int sig) { return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP"; }

struct outcome {
    bool signalled = false;
    int sig = 0, exit_code = -1;
    double stop_s = -1;  ///< from the signal to the end of the process
    std::string err;     ///< what it printed on stderr (and stdout, under a terminal)
    bool ready = false;  ///< it reached the phase the signal was meant for
    pid_t pid = 0;
};

std::string command_output(const std::string& cmd) {
    std::string text;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
        char buf[4096];
        for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
        ::pclose(p);
    }
    return text;
}

// Reads from fd into `text` until `needle` appears or `timeout_s` passes; true when it appeared.
bool read_until(int fd, std::string& text, const std::string& needle, double timeout_s) {
    const auto end = clk::now() + std::chrono::duration<double>(timeout_s);
    while (text.find(needle) == std::string::npos) {
        const double left = std::chrono::duration<double>(end - clk::now()).count();
        if (left <= 0) return false;
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left * 1000) + 1) <= 0) continue;
        char buf[4096];
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) return text.find(needle) != std::string::npos;
        text.append(buf, static_cast<std::size_t>(n));
    }
    return true;
}

// Waits for pid (at most 20 s, then SIGKILL); fills the exit fields.
void wait_for(pid_t pid, outcome& r, clk::time_point signalled_at) {
    int status = 0;
    const auto give_up = clk::now() + std::chrono::seconds(20);
    while (::waitpid(pid, &status, WNOHANG) == 0) {
        if (clk::now() > give_up) {
            ::kill(-pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    r.stop_s = std::chrono::duration<double>(clk::now() - signalled_at).count();
    r.signalled = WIFSIGNALED(status);
    r.sig = r.signalled ? WTERMSIG(status) : 0;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Reads what is left until end of file, for at most 2 s (a surviving descendant may hold the pipe open).
void drain(int fd, std::string& text) {
    const auto end = clk::now() + std::chrono::seconds(2);
    char buf[4096];
    for (pollfd p{fd, POLLIN, 0}; clk::now() < end && ::poll(&p, 1, 100) >= 0;) {
        if (!(p.revents & (POLLIN | POLLHUP))) continue;
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) return;
        text.append(buf, static_cast<std::size_t>(n));
    }
}

std::vector<char*> argv_of(std::vector<std::string>& args, std::string& bin) {
    std::vector<char*> argv{bin.data()};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    return argv;
}

// When the command is at work, and what it runs with.
struct trigger {
    std::string line;             ///< a text on stderr that marks the working phase,
    std::string fifo = {};        ///< or (when non-empty) the command's open of this FIFO input;
    std::function<bool()> also = {};  ///< then also this, polled (may be empty)
    std::string env = {};         ///< NAME=VALUE added to the command's environment (may be empty)
};

// Starts `mmgp ARGS` in a process group of its own with stdout on /dev/null and stderr on a pipe (as under
// CI), waits until `when` says it is at work, then sends `sig` to the process, or to its whole process
// group, and waits.
outcome signal_when_ready(std::vector<std::string> args, int sig, bool group, const trigger& when) {
    std::string bin = mmgp::test::mmgp_bin();
    auto argv = argv_of(args, bin);
    std::vector<std::string> env_text;
    for (char** e = environ; *e; ++e) env_text.emplace_back(*e);
    if (!when.env.empty()) env_text.push_back(when.env);
    std::vector<char*> envp;
    for (auto& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);
    int err[2];
    REQUIRE(::pipe(err) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    posix_spawn_file_actions_addclose(&fa, err[0]);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, bin.c_str(), &fa, &at, argv.data(), envp.data()) == 0);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    ::close(err[1]);
    outcome r;
    r.pid = pid;
    int writer = -1;
    if (!when.fifo.empty()) {
        writer = ::open(when.fifo.c_str(), O_WRONLY);  // returns once mmgp has opened its input for reading
        r.ready = writer >= 0;
        if (writer >= 0) (void)!::write(writer, "m,p,time_s\n1,1,", 15);  // half a table: it waits for the rest
    } else {
        r.ready = read_until(err[0], r.err, when.line, 60);
    }
    for (const auto give_up = clk::now() + std::chrono::seconds(60); r.ready && when.also && !when.also();) {
        if (clk::now() > give_up) r.ready = false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const auto t0 = clk::now();
    ::kill(group ? -pid : pid, sig);
    wait_for(pid, r, t0);
    if (writer >= 0) ::close(writer);
    drain(err[0], r.err);
    ::close(err[0]);
    return r;
}

// The same under a pseudo-terminal: the command is the foreground process of its own terminal and the
// test types Ctrl-C, which the terminal turns into SIGINT for that process group.
outcome ctrl_c_in_terminal(std::vector<std::string> args, const std::string& ready_line) {
    std::string bin = mmgp::test::mmgp_bin();
    auto argv = argv_of(args, bin);
    int master = -1;
    pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::execve(bin.c_str(), argv.data(), environ);
        ::_exit(127);
    }
    outcome r;
    r.ready = read_until(master, r.err, ready_line, 60);
    const auto t0 = clk::now();
    REQUIRE(::write(master, "\x03", 1) == 1);  // Ctrl-C
    wait_for(pid, r, t0);
    pollfd p{master, POLLIN, 0};
    while (::poll(&p, 1, 50) > 0) {  // what is left in the terminal (EIO once the child is gone)
        char buf[4096];
        ssize_t n = ::read(master, buf, sizeof buf);
        if (n <= 0) break;
        r.err.append(buf, static_cast<std::size_t>(n));
    }
    ::close(master);
    return r;
}

// Processes whose environment holds `tag` (every descendant inherits it, also daemons in sessions of their own),
// only those named `comm` when given.
std::vector<int> tagged_processes(const std::string& tag, const std::string& comm = "") {
    std::vector<int> found;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        const std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        const std::string env = mmgp::test::slurp(e.path() / "environ");
        const std::string stat = mmgp::test::slurp(e.path() / "stat");
        const auto close = stat.rfind(')');
        const bool zombie = close != std::string::npos && stat.size() > close + 2 && stat[close + 2] == 'Z';
        const auto open = stat.find('(');
        const bool named = comm.empty() || (open != std::string::npos && close != std::string::npos &&
                                            stat.compare(open + 1, close - open - 1, comm) == 0);
        if (!zombie && named && env.find(tag) != std::string::npos) found.push_back(std::stoi(name));
    }
    return found;
}

std::vector<std::string> temporaries(const std::filesystem::path& dir) {
    std::vector<std::string> t;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().filename().string().find(".tmp.") != std::string::npos) t.push_back(e.path().string());
    return t;
}

void check_interrupted(const outcome& r, int sig, const std::string& target, const std::string& previous) {
    CHECK(r.ready);
    CHECK(r.signalled);
    CHECK(r.sig == sig);
    CHECK(r.exit_code == -1);  // not a normal exit, whatever its status
    CHECK(r.stop_s < 1.0);
    CHECK(r.err.find(std::string("mmgp: interrupted (") + sig_name(sig) + "): " + target + " left as it was") !=
          std::string::npos);
    CHECK(mmgp::test::slurp(target) == previous);  // byte-identical
    CHECK(temporaries(std::filesystem::path(target).parent_path()).empty());
}

struct command_case {
    const char* name;
    std::vector<std::string> args;  ///< "OUT" is replaced by the output file, "IN" by the FIFO
    std::string ready_line;         ///< empty: ready when the FIFO input is opened
};

std::vector<command_case> commands() {
    std::vector<command_case> c = {
        {"calibrate", {"calibrate", "--quick", "-o", "OUT"}, "mmgp calibrate: [1/"},
        {"fit", {"fit", "IN", "-o", "OUT"}, ""},
    };
    return c;
}

void signal_each_way(const std::vector<command_case>& cases) {
    mmgp::test::temp_dir d;
    const std::string previous = "{\"previous\": \"a calibration that took hours\"}\n";
    const std::string out = (d.path / "result.json").string(), fifo = (d.path / "runs.csv").string();
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    for (const auto& c : cases) {
        for (int sig : {SIGINT, SIGTERM}) {
            for (bool group : {false, true}) {
                d.write("result.json", previous);
                std::vector<std::string> args = c.args;
                for (auto& a : args) a = a == "OUT" ? out : a == "IN" ? fifo : a;
                outcome r = signal_when_ready(args, sig, group, {c.ready_line, c.ready_line.empty() ? fifo : ""});
                const std::string what = std::string("mmgp ") + c.name + ": " + sig_name(sig) +
                                         (group ? " to the process group" : " to the process");
                INFO(what << "; stopped " << r.stop_s << " s after the signal; stderr: " << r.err);
                check_interrupted(r, sig, out, previous);
            }
        }
    }
}

}  // namespace

TEST_CASE("SIGINT and SIGTERM, to the process or its group, stop calibrate and fit within 1 s") {
    signal_each_way(commands());
}

TEST_CASE("SIGINT and SIGTERM, to the process or its group, stop mmgp profile within 1 s" *
          doctest::skip(!have_profile) * doctest::description("needs libpll (mmgp profile)")) {
    // A workload of ~10 s, so that the signal after the first run (its progress line) lands while it still measures.
    signal_each_way({{"profile", {"profile", "--simulate", "24:6000", "--units", "8", "--repetitions", "9", "-o", "OUT"},
                      "mmgp profile: [1/"}});
}

TEST_CASE("SIGHUP stops mmgp calibrate too, and without -o the message names no file") {
    outcome r = signal_when_ready({"calibrate", "--quick"}, SIGHUP, false, {"mmgp calibrate: [1/"});
    INFO("stderr: " << r.err);
    CHECK(r.ready);
    CHECK(r.signalled);
    CHECK(r.sig == SIGHUP);
    CHECK(r.stop_s < 1.0);
    CHECK(r.err.find("mmgp: interrupted (SIGHUP)\n") != std::string::npos);
}

TEST_CASE("Ctrl-C in a terminal stops mmgp calibrate and keeps the previous file") {
    mmgp::test::temp_dir d;
    const std::string previous = "{\"previous\": 1}\n";
    const std::string out = d.write("host.json", previous);
    outcome r = ctrl_c_in_terminal({"calibrate", "--quick", "-o", out}, "mmgp calibrate: [1/");
    INFO("stopped " << r.stop_s << " s after Ctrl-C; terminal: " << r.err);
    check_interrupted(r, SIGINT, out, previous);
}

// Whether a network namespace can be made and entered here (a chroot may have ip(8) but not what ip netns needs;
// calibrate --mpi then measures no emulated node, and there is nothing to interrupt there).
bool netns_works() {
    if (::geteuid() != 0 || !mmgp::test::on_path("ip")) return false;
    const std::string probe = "mmgptest" + std::to_string(::getpid());
    const int rc = std::system(("ip netns add " + probe + " >/dev/null 2>&1 && ip -n " + probe +
                                " link set lo up >/dev/null 2>&1").c_str());
    (void)std::system(("ip netns del " + probe + " >/dev/null 2>&1").c_str());
    return rc == 0;
}

TEST_CASE("SIGTERM during calibrate --mpi kills mpirun, its daemons and the benchmark, and removes the namespaces" *
          doctest::skip(sanitized || ::geteuid() != 0 || !mmgp::test::on_path("mpirun") || !netns_works()) *
          doctest::description("needs root, mpirun (openmpi-bin), network namespaces (ip netns, iproute2) and a build "
                               "without sanitizers")) {
    mmgp::test::temp_dir d;
    const std::string previous = "{\"previous\": 3}\n";
    const std::string out = d.write("host.json", previous);
    const std::string tag = "MMGP_INTERRUPT_TEST=" + std::to_string(::getpid()) + "-" + d.path.filename().string();
    // Signalled while the emulated two-node run measures: mpirun under timeout(1), which is in a process group of
    // its own, and orted daemons in sessions of their own inside network namespaces, the benchmark running.
    outcome r = signal_when_ready({"calibrate", "--quick", "--mpi", "-o", out}, SIGTERM, false,
                                  {"mmgp calibrate: mpi: nodes=2", "",
                                   [&] { return tagged_processes(tag, "mmgp-mpi-bench").size() >= 2; }, tag});
    INFO("stopped " << r.stop_s << " s after the signal; stderr: " << r.err);
    check_interrupted(r, SIGTERM, out, previous);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(tagged_processes(tag).empty());
    const std::string net = command_output("ip netns list; ip link show");
    CHECK(net.find("mmgp" + std::to_string(r.pid % 10000000)) == std::string::npos);  // its namespaces, veths, bridge
}

TEST_CASE("SIGKILL while measuring leaves the previous file intact" * doctest::description("no handler can run")) {
    mmgp::test::temp_dir d;
    const std::string previous = "{\"previous\": 2}\n";
    const std::string out = d.write("host.json", previous);
    outcome r = signal_when_ready({"calibrate", "--quick", "-o", out}, SIGKILL, false, {"mmgp calibrate: [1/"});
    CHECK(r.ready);
    CHECK(r.sig == SIGKILL);
    CHECK(mmgp::test::slurp(out) == previous);
}
