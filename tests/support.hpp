// Test helpers: temporary files, environment variables for a scope, running the mmgp binary, independent Eq. 11.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace mmgp::test {

/// A fresh temporary directory, removed at scope exit.
struct temp_dir {
    std::filesystem::path path;
    temp_dir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "mmgp-test-XXXXXX").string();
        path = mkdtemp(tmpl.data());
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    std::string write(const std::string& name, const std::string& text) const {
        auto p = path / name;
        std::ofstream(p) << text;
        return p.string();
    }
};

/// An environment variable set (or, with nullptr, unset) for a scope, then restored, even when a check throws.
struct env_var {
    std::string name;
    std::optional<std::string> old;
    env_var(std::string n, const char* value) : name(std::move(n)) {
        if (const char* o = std::getenv(name.c_str())) old = o;
        set(value);
    }
    void set(const char* value) const {
        if (value) ::setenv(name.c_str(), value, 1);
        else ::unsetenv(name.c_str());
    }
    ~env_var() { set(old ? old->c_str() : nullptr); }
    env_var(const env_var&) = delete;
    env_var& operator=(const env_var&) = delete;
};

inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// Result of running a command: exit status, stdout, stderr.
struct run_result {
    int status = -1;
    std::string out, err;
};

/// True in a build with AddressSanitizer or ThreadSanitizer: a sanitized libmmgp needs its runtime loaded first,
/// which an outside program does not do, and a sanitized mmgp-mpi-bench aborts inside MPI_Finalize on OpenMPI's
/// own leaks (mpirun status 134).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool sanitized = true;
#else
inline constexpr bool sanitized = false;
#endif

/// True when an executable named `prog` is on PATH (no shell: usable in a doctest::skip() decorator).
inline bool on_path(const std::string& prog) {
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    for (std::size_t a = 0; a <= dirs.size();) {
        std::size_t b = dirs.find(':', a);
        if (b == std::string::npos) b = dirs.size();
        std::string dir = b > a ? dirs.substr(a, b - a) : std::string(".");
        if (::access((dir + "/" + prog).c_str(), X_OK) == 0) return true;
        a = b + 1;
    }
    return false;
}

/// The mmgp binary under test (MMGP_BIN, set by meson test).
inline std::string mmgp_bin() {
    const char* b = std::getenv("MMGP_BIN");
    return b ? b : "build/cli/mmgp";
}

/// Runs `mmgp ARGS` through the shell (ARGS already quoted) and captures both streams.
inline run_result run_mmgp(const std::string& args) {
    temp_dir d;
    std::string out = (d.path / "out").string(), err = (d.path / "err").string();
    std::string cmd = mmgp_bin() + " " + args + " >" + out + " 2>" + err + " </dev/null";
    int rc = std::system(cmd.c_str());
    run_result r;
    r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

inline int count_lines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

/// Eq. 11 of [H], written out again here from the paper, independently of libmmgp:
/// T(m,p) = a(m) T_hpu + T_apu/(m p) + C_apu + N (O_offload + T_csw + O_col(m) + p g).
inline double eq11_reference(double alpha_m, double T_hpu, double T_apu, double C_apu, double N, double O_offload,
                             double T_csw, double O_col_m, double g, int m, int p) {
    return alpha_m * T_hpu + T_apu / (m * p) + C_apu + N * (O_offload + T_csw + O_col_m + p * g);
}

}  // namespace mmgp::test

#include <doctest/doctest.h>

namespace mmgp::test {
/// Runs `mmgp ARGS` and checks the bad-input contract: exit status 2, nothing on stdout, exactly one
/// line on stderr, containing `must_contain`.
inline void expect_bad_input(const std::string& args, const std::string& must_contain) {
    auto r = run_mmgp(args);
    INFO("mmgp " << args << "\nstderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(count_lines(r.err) == 1);
    CHECK(r.err.find(must_contain) != std::string::npos);
}

/// doctest::Approx without its absolute floor (scale 0): |a - b| < epsilon * max(|a|, |b|), so tiny
/// values (seconds per byte, microseconds) are compared relatively too.
inline doctest::Approx approx(double v) { return doctest::Approx(v).scale(0.0); }
}  // namespace mmgp::test
