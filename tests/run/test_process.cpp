// run/process.hpp's program finder (a flag, then the environment, then the build beside the running program, then
// the PATH), path_lookup as execvp resolves a word, and the one exception-to-exit-status mapping.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "mmgp/error.hpp"
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
