#include "mmgp/io.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace mmgp {

namespace {

// State the signal handler reads: only fixed buffers and sig_atomic_t flags.
char g_tmp[4096];
volatile std::sig_atomic_t g_tmp_live = 0;
char g_msg_existing[4200];
char g_msg_new[4200];
volatile std::sig_atomic_t g_guard = 0;
volatile std::sig_atomic_t g_path_existed = 0;
struct sigaction g_old[3];
constexpr int g_signals[3] = {SIGINT, SIGTERM, SIGHUP};

void write_all(int fd, const char* s) {
    std::size_t n = std::strlen(s);
    while (n > 0) {
        ssize_t w = ::write(fd, s, n);
        if (w <= 0) return;
        s += w;
        n -= static_cast<std::size_t>(w);
    }
}

extern "C" void on_interrupt(int sig) {
    if (g_tmp_live) ::unlink(g_tmp);
    if (g_guard) {
        const char* name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
        write_all(2, "mmgp: interrupted (");
        write_all(2, name);
        write_all(2, g_path_existed ? g_msg_existing : g_msg_new);
    }
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

void install() {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; ++i) sigaction(g_signals[i], &sa, &g_old[i]);
}

void restore() {
    for (int i = 0; i < 3; ++i) sigaction(g_signals[i], &g_old[i], nullptr);
}

[[noreturn]] void fail(const std::string& path, const char* expected, int err) {
    throw input_error(path, "", expected, std::strerror(err));
}

}  // namespace

interrupt_guard::interrupt_guard(const std::string& path) {
    std::error_code ec;
    g_path_existed = std::filesystem::exists(path, ec) ? 1 : 0;
    std::snprintf(g_msg_existing, sizeof g_msg_existing, "): %s left as it was\n", path.c_str());
    std::snprintf(g_msg_new, sizeof g_msg_new, "): %s not created\n", path.c_str());
    g_guard = 1;
    install();
}

interrupt_guard::~interrupt_guard() {
    g_guard = 0;
    restore();
}

void write_file_atomically(const std::string& path, const std::string& text,
                           const std::function<void(const std::string&)>& check) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (path.empty()) throw input_error("(output)", "", "a file path", "an empty path");
    if (fs::is_directory(path, ec)) throw input_error(path, "", "a file path", "a directory");
    const std::string tmpl = path + ".tmp.XXXXXX";
    if (tmpl.size() >= sizeof g_tmp) throw input_error(path, "", "a path shorter than 4000 bytes", "a longer one");
    const bool guarded = g_guard != 0;
    if (!guarded) install();  // the handler removes the temporary file if a signal comes mid-write
    std::memcpy(g_tmp, tmpl.c_str(), tmpl.size() + 1);
    int fd = ::mkstemp(g_tmp);
    if (fd < 0) {
        int e = errno;
        if (!guarded) restore();
        fail(path, "a writable directory for the file", e);
    }
    g_tmp_live = 1;
    const std::string tmp = g_tmp;
    auto give_up = [&] {
        ::unlink(tmp.c_str());
        g_tmp_live = 0;
        if (!guarded) restore();
    };
    try {
        const char* p = text.data();
        std::size_t left = text.size();
        while (left > 0) {
            ssize_t w = ::write(fd, p, left);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) fail(path, "a writable file", errno);
            p += w;
            left -= static_cast<std::size_t>(w);
        }
        if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) fail(path, "a writable file", errno);
        int rc = ::close(fd);
        fd = -1;
        if (rc != 0) fail(path, "a writable file", errno);
        if (check) check(tmp);
        if (std::rename(tmp.c_str(), path.c_str()) != 0) fail(path, "a path the file can be renamed to", errno);
    } catch (...) {
        if (fd >= 0) ::close(fd);
        give_up();
        throw;
    }
    g_tmp_live = 0;
    if (!guarded) restore();
}

}  // namespace mmgp
