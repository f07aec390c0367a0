// No lost data: killing `mmgp calibrate` / `mmgp profile` at a random point never touches the file
// they were told to replace, and SIGINT/SIGTERM say what was kept.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <random>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "support.hpp"

extern char** environ;

namespace {

struct killed_run {
    bool signalled = false;
    int sig = 0;
    std::string err;
};

// Starts `mmgp ARGS...`, sends `sig` after `delay_s`, waits for it.
killed_run run_and_kill(std::vector<std::string> args, int sig, double delay_s, const std::string& err_file) {
    std::vector<char*> argv;
    std::string bin = mmgp::test::mmgp_bin();
    argv.push_back(bin.data());
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, bin.c_str(), &fa, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&fa);
    std::this_thread::sleep_for(std::chrono::duration<double>(delay_s));
    kill(pid, sig);
    int status = 0;
    waitpid(pid, &status, 0);
    killed_run r;
    r.signalled = WIFSIGNALED(status);
    r.sig = r.signalled ? WTERMSIG(status) : 0;
    r.err = mmgp::test::slurp(err_file);
    return r;
}

}  // namespace

TEST_CASE("interrupting mmgp calibrate and mmgp profile leaves the previous file intact") {
    mmgp::test::temp_dir d;
    const std::string previous = "{\"previous\": \"a calibration that took hours\"}\n";
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<double> when(0.05, 3.0);
    struct plan {
        std::vector<std::string> args;
        int sig;
    };
    std::string out = d.write("host.json", previous);
    std::string app = d.write("app.json", previous);
    const plan plans[] = {{{"calibrate", "--quick", "-o", out}, SIGINT},
                          {{"calibrate", "--quick", "-o", out}, SIGTERM},
                          {{"calibrate", "--quick", "-o", out}, SIGKILL},
                          {{"profile", "--simulate", "8:400", "--units", "4", "-o", app}, SIGTERM}};
    for (const auto& p : plans) {
        const std::string& target = p.args.back();
        double delay = when(rng);
        INFO("mmgp " << p.args[0] << " killed by signal " << p.sig << " after " << delay << " s");
        killed_run r = run_and_kill(p.args, p.sig, delay, (d.path / "err").string());
        std::string now = mmgp::test::slurp(target);
        if (r.signalled) {
            CHECK(r.sig == p.sig);
            CHECK(now == previous);  // untouched
            if (p.sig != SIGKILL) CHECK(r.err.find("mmgp: interrupted (" + std::string(p.sig == SIGINT ? "SIGINT" : "SIGTERM") +
                                                   "): " + target + " left as it was") != std::string::npos);
        } else {
            // It finished before the signal: then the file is a complete new profile.
            CHECK(now.find("\"schema\": \"mmgp/1\"") != std::string::npos);
            d.write(std::filesystem::path(target).filename().string(), previous);
        }
        // No temporary file is left behind after SIGINT/SIGTERM.
        if (p.sig != SIGKILL)
            for (const auto& e : std::filesystem::directory_iterator(d.path))
                CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
    }
}
