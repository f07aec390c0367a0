// run/process.hpp's program finder (a flag, then the environment, then the build beside the running program, then
// the PATH), path_lookup as execvp resolves a word, and the one exception-to-exit-status mapping; run/forked.hpp's
// child running a function with a pipe each way, and a shell line's status.
#include <doctest/doctest.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "mmgp/error.hpp"
#include "forked.hpp"
#include "process.hpp"

namespace {

// A temporary directory with an executable `name` in it; PATH set to it (restored after).
struct path_dir {
    std::filesystem::path dir;
    std::string old_path;
    explicit path_dir(const std::string& name) {
        char tmpl[] = "/tmp/mmgp-path-XXXXXX";
        dir = mkdtemp(tmpl);
        std::ofstream(dir / name) << "#!/bin/sh\n";
        chmod((dir / name).c_str(), 0755);
        std::ofstream(dir / "not-executable") << "#!/bin/sh\n";
        old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
        setenv("PATH", ("/nonexistent:" + dir.string()).c_str(), 1);
    }
    ~path_dir() {
        setenv("PATH", old_path.c_str(), 1);
        std::filesystem::remove_all(dir);
    }
};

}  // namespace

TEST_CASE("run: path_lookup finds a word as execvp does, find_program a flag, then the environment, then the PATH") {
    path_dir d("mmgp-test-tool");
    using mmgp::run::find_program;
    using mmgp::run::path_lookup;
    CHECK(path_lookup("mmgp-test-tool") == (d.dir / "mmgp-test-tool").string());
    CHECK(path_lookup("not-executable").empty());
    CHECK(path_lookup("no-such-tool-anywhere").empty());
    CHECK(path_lookup("./relative/x") == "./relative/x");  // a word with '/' is itself
    unsetenv("MMGP_TEST_TOOL");
    CHECK(find_program("", "MMGP_TEST_TOOL", "mmgp-test-tool") == (d.dir / "mmgp-test-tool").string());
    setenv("MMGP_TEST_TOOL", "/from/env", 1);
    CHECK(find_program("", "MMGP_TEST_TOOL", "mmgp-test-tool") == "/from/env");
    CHECK(find_program("/from/flag", "MMGP_TEST_TOOL", "mmgp-test-tool") == "/from/flag");
    unsetenv("MMGP_TEST_TOOL");
    CHECK(find_program("", "MMGP_TEST_TOOL", "no-such-tool-anywhere").empty());
}

TEST_CASE("run: the one exception-to-exit-status mapping: bad input 2, what failed on the machine 1") {
    using mmgp::run::exit_status_of;
    CHECK(exit_status_of(mmgp::input_error("f.json", "/x", "a number", "\"y\"")) == 2);
    CHECK(exit_status_of(mmgp::error("--p: expected an integer, found x")) == 2);
    CHECK(exit_status_of(mmgp::failure("mpirun failed")) == 1);
    CHECK(exit_status_of(std::runtime_error("libpll: out of memory")) == 1);
    CHECK(exit_status_of(std::invalid_argument("not one of the project's errors")) == 1);
}

TEST_CASE("run: fork_with_pipes runs a function in a child, a pipe each way; wait_forked gives its exit code") {
    // The child reads a line from this side, answers it doubled and exits with its length: the pipes go both ways
    // and the code comes back.
    mmgp::run::forked c = mmgp::run::fork_with_pipes([](int to_parent, int from_parent) {
        char buf[16] = {};
        const ssize_t n = ::read(from_parent, buf, sizeof buf - 1);
        const std::string twice = std::string(buf, static_cast<std::size_t>(n > 0 ? n : 0)) + buf;
        (void)!::write(to_parent, twice.data(), twice.size());
        return static_cast<int>(n);
    });
    REQUIRE(c.pid > 0);
    REQUIRE(::write(c.to_child, "abc", 3) == 3);
    char got[16] = {};
    std::size_t have = 0;
    for (ssize_t n = 0; have < 6 && (n = ::read(c.from_child, got + have, sizeof got - 1 - have)) > 0;)
        have += static_cast<std::size_t>(n);
    CHECK(std::string(got) == "abcabc");
    CHECK(mmgp::run::wait_forked(c) == 3);
    CHECK(c.pid == -1);
    CHECK(c.from_child == -1);
    CHECK(mmgp::run::wait_forked(c) == -1);  // waited for already: nothing to wait for
    // An exception let out of the body is exit status 1; a child ended by a signal 128 + n.
    mmgp::run::forked thrower = mmgp::run::fork_with_pipes([](int, int) -> int { throw std::runtime_error("x"); });
    CHECK(mmgp::run::wait_forked(thrower) == 1);
    mmgp::run::forked killed = mmgp::run::fork_with_pipes([](int, int) {
        ::raise(SIGKILL);
        return 0;
    });
    CHECK(mmgp::run::wait_forked(killed) == 128 + SIGKILL);
}

TEST_CASE("run: answer_of_child reads a child's answer by a deadline, kills a child that hangs, waits for it") {
    int v[2] = {0, 0}, code = -1;
    CHECK(mmgp::run::answer_of_child([](int to_parent) {
        const int w[2] = {7, 132};
        return mmgp::run::write_all(to_parent, w, sizeof w) ? 0 : 1;
    }, v, sizeof v, mmgp::run::steady_seconds() + 10, &code));
    CHECK(v[1] == 132);
    CHECK(code == 0);
    // No answer: false, and its exit code.
    CHECK_FALSE(mmgp::run::answer_of_child([](int) { return 3; }, v, sizeof v, mmgp::run::steady_seconds() + 10, &code));
    CHECK(code == 3);
    // A child that hangs is killed at the deadline, not waited for the 30 s it would take.
    const double t0 = mmgp::run::steady_seconds();
    CHECK_FALSE(mmgp::run::answer_of_child([](int) {
        ::sleep(30);
        return 0;
    }, v, sizeof v, t0 + 0.3, &code));
    CHECK(code == 128 + SIGKILL);
    CHECK(mmgp::run::steady_seconds() - t0 < 10);
}

TEST_CASE("run: shell_status waits for a shell line and gives its exit code, as std::system's") {
    CHECK(mmgp::run::shell_status("exit 0") == 0);
    CHECK(mmgp::run::shell_status("exit 7") == 7);
    CHECK(mmgp::run::shell_status("kill -TERM $$") == 128 + SIGTERM);
    CHECK(mmgp::run::shell_status("command -v a-program-that-is-not-there-anywhere >/dev/null 2>&1") != 0);
}
