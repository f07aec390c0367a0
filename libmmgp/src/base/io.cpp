#include "mmgp/io.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace mmgp {

namespace {

namespace fs = std::filesystem;

// ---- state the signal handler reads: fixed buffers and sig_atomic_t flags only ---------------------
char g_tmp[4096];
volatile std::sig_atomic_t g_tmp_live = 0;
char g_msg_existing[4200];
char g_msg_new[4200];
volatile std::sig_atomic_t g_guard = 0;
volatile std::sig_atomic_t g_path_existed = 0;
std::atomic<interrupt_hook> g_hook{nullptr};             // the process layer's stop of its children
static_assert(std::atomic<interrupt_hook>::is_always_lock_free, "read in a signal handler");
volatile std::sig_atomic_t g_in_command = 0;               // > 0: hold the signal (an interrupt_hold is alive)
volatile std::sig_atomic_t g_pending = 0;                  // the held signal
volatile std::sig_atomic_t g_count = 0;                    // signals handled so far

// ---- installation, counted (guard, atomic write and child_scope may nest) ---------------------------
constexpr int g_signals[3] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_old[3];
int g_users = 0;

void write_all(int fd, const char* s) {
    std::size_t n = std::strlen(s);
    while (n > 0) {
        ssize_t w = ::write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        s += w;
        n -= static_cast<std::size_t>(w);
    }
}

const char* signal_name(int sig) {
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "signal";
}

// Async-signal-safe: prints the line, then ends the process by `sig` (its default action).
[[noreturn]] void die_by(int sig) {
    write_all(2, "mmgp: interrupted (");
    write_all(2, signal_name(sig));
    write_all(2, g_guard ? (g_path_existed ? g_msg_existing : g_msg_new) : ")\n");
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(sig);
    ::_exit(128 + sig);  // only if the default action did not end the process
}

// Internal linkage: no other definition anywhere (an executable's, a plugin's) can take its place.
void on_signal(int sig) {
    const int saved = errno;
    g_count = g_count + 1;
    if (const interrupt_hook hook = g_hook.load(std::memory_order_relaxed)) hook();
    if (g_tmp_live) ::unlink(g_tmp);
    if (g_in_command > 0) {  // the hold's owner returns; its caller cleans up, then finish_interrupt()
        g_pending = sig;
        errno = saved;
        return;
    }
    die_by(sig);
}

void acquire() {
    if (g_users++ > 0) return;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sa.sa_mask = interrupt_signals();  // one handler at a time
    for (int i = 0; i < 3; ++i) ::sigaction(g_signals[i], &sa, &g_old[i]);
}

void release() {
    if (--g_users > 0) return;
    for (int i = 0; i < 3; ++i) ::sigaction(g_signals[i], &g_old[i], nullptr);
}

struct counted_handler {
    counted_handler() { acquire(); }
    ~counted_handler() { release(); }
    counted_handler(const counted_handler&) = delete;
    counted_handler& operator=(const counted_handler&) = delete;
};

// ---- output destinations ----------------------------------------------------------------------------
enum class dest_kind { file, special, stream };
struct destination {
    std::string path;  ///< after following symbolic links
    dest_kind kind = dest_kind::file;
    int fd = -1;       ///< stream: the process's own descriptor the path names (/dev/stdout: 1)
    mode_t mode = 0;   ///< file: the existing file's permission bits (kept when it is replaced)
    bool exists = false;
    dev_t dev = 0;  ///< when it exists: its device and inode
    ino_t ino = 0;
};

[[noreturn]] void refuse(const std::string& option, const std::string& path, const std::string& expected,
                         const std::string& found) {
    throw error((option.empty() ? std::string() : option + " ") + path + ": expected " + expected + ", found " + found);
}

// Devices and FIFOs check_output() opened, kept open until written: closing a FIFO's only writer would end its
// reader's input before the text comes (device and inode -> descriptor).
std::map<std::pair<dev_t, ino_t>, int>& held_open() {
    static std::map<std::pair<dev_t, ino_t>, int> fds;
    return fds;
}

// The descriptor a path names when it is one of this process's own: /dev/stdout, /dev/stderr, /dev/fd/N,
// /proc/self/fd/N; -1 otherwise. Such a destination is a stream: written where the descriptor points (after
// what the shell wrote there), never replaced.
int own_descriptor(const std::string& path) {
    if (path == "/dev/stdout") return 1;
    if (path == "/dev/stderr") return 2;
    for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
        const std::string pre = prefix;
        if (path.size() > pre.size() && path.compare(0, pre.size(), pre) == 0) {
            char* end = nullptr;
            const long n = std::strtol(path.c_str() + pre.size(), &end, 10);
            if (*end == '\0' && n >= 0 && n < 1 << 20) return static_cast<int>(n);
        }
    }
    return -1;
}

destination resolve(const std::string& option, const std::string& path) {
    if (path.empty()) refuse(option, "''", "a file path", "an empty string");
    if (const int fd = own_descriptor(path); fd >= 0) {
        destination d;
        d.path = path;
        d.kind = dest_kind::stream;
        d.fd = fd;
        struct stat st {};
        if (::fstat(fd, &st) != 0) refuse(option, path, "an open descriptor " + std::to_string(fd), std::strerror(errno));
        d.exists = true;
        d.dev = st.st_dev;
        d.ino = st.st_ino;
        return d;
    }
    fs::path p(path);
    struct stat st {};
    for (int hops = 0; ::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode); ++hops) {
        if (hops == 40) refuse(option, path, "a file path", "a loop of symbolic links");
        std::error_code ec;
        fs::path t = fs::read_symlink(p, ec);
        if (ec) refuse(option, path, "a readable symbolic link", ec.message());
        p = t.is_absolute() ? t : p.parent_path() / t;
    }
    destination d;
    d.path = p.string();
    if (::stat(p.c_str(), &st) != 0) {
        if (errno != ENOENT) refuse(option, path, "a path it can reach", std::strerror(errno));
        return d;
    }
    d.exists = true;
    d.dev = st.st_dev;
    d.ino = st.st_ino;
    d.mode = st.st_mode & 07777;
    if (S_ISDIR(st.st_mode)) refuse(option, path, "a file path", "a directory");
    if (S_ISREG(st.st_mode)) return d;
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
        d.kind = dest_kind::special;
        return d;
    }
    refuse(option, path, "a regular file, a character device or a FIFO",
           S_ISSOCK(st.st_mode) ? "a socket" : S_ISBLK(st.st_mode) ? "a block device (never overwritten)" : "another kind of file");
}

std::string parent_dir(const std::string& path) {
    fs::path p(path);
    return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

[[noreturn]] void fail(const std::string& path, const char* expected, int err) {
    throw input_error(path, "", expected, std::strerror(err));
}

void write_fd(int fd, const std::string& path, const std::string& text) {
    const char* p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
        ssize_t w = ::write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) fail(path, "a writable file", errno);
        p += w;
        left -= static_cast<std::size_t>(w);
    }
}

// Removes the temporary file write_temporary() made (the handler no longer needs to).
void discard(const std::string& tmp) {
    ::unlink(tmp.c_str());
    g_tmp_live = 0;
}

// Writes `text` into a new temporary file made from `tmpl` (the handler removes it if a signal comes).
// Returns its name; the caller renames it (then clears g_tmp_live) or discard()s it.
std::string write_temporary(const std::string& path, const std::string& tmpl, const std::string& text) {
    if (tmpl.size() >= sizeof g_tmp) throw input_error(path, "", "a path shorter than 4000 bytes", "a longer one");
    std::memcpy(g_tmp, tmpl.c_str(), tmpl.size() + 1);
    int fd = ::mkstemp(g_tmp);
    if (fd < 0) fail(path, "a writable directory for the file", errno);
    g_tmp_live = 1;
    const std::string tmp = g_tmp;
    try {
        write_fd(fd, path, text);
        if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) fail(path, "a writable file", errno);
    } catch (...) {
        ::close(fd);
        discard(tmp);
        throw;
    }
    if (::close(fd) != 0) {
        int e = errno;
        discard(tmp);
        fail(path, "a writable file", e);
    }
    return tmp;
}

}  // namespace

void check_output(const std::string& option, const std::string& path, const std::vector<std::string>& inputs) {
    destination d = resolve(option, path);
    if (d.kind == dest_kind::stream) {
        const int fl = ::fcntl(d.fd, F_GETFL);
        if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
            refuse(option, path, "a descriptor open for writing", "descriptor " + std::to_string(d.fd) + " not writable");
        if (::write(d.fd, "", 0) < 0) refuse(option, path, "a writable file", std::strerror(errno));
    } else if (d.kind == dest_kind::special) {
        // Opened as the write will open it, without blocking: a FIFO nobody reads (ENXIO), a terminal this
        // process has none of, a device that refuses every write (/dev/full: a write of nothing fails too).
        const int fd = ::open(d.path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            refuse(option, path, "a writable file (a FIFO: one that someone reads)",
                   errno == ENXIO ? std::string("nobody reading it (") + std::strerror(errno) + ")" : std::strerror(errno));
        if (::write(fd, "", 0) < 0) {
            const int err = errno;
            ::close(fd);
            refuse(option, path, "a writable file", std::strerror(err));
        }
        auto [it, added] = held_open().emplace(std::pair{d.dev, d.ino}, fd);
        if (!added) ::close(fd);
    } else {
        const std::string dir = parent_dir(d.path);
        struct stat st {};
        if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            refuse(option, path, "a file in an existing directory", "no directory " + dir);
        // The honest test (as root, access() says yes to /proc): make the temporary file the write will make.
        std::string probe = d.path + ".tmp.XXXXXX";
        const int fd = ::mkstemp(probe.data());
        if (fd < 0)
            refuse(option, path, "a file in a writable directory", dir + " not writable (" + std::strerror(errno) + ")");
        ::close(fd);
        ::unlink(probe.c_str());
    }
    if (!d.exists) {
        // A file not written yet that another output of the command will be (a new tune's journal).
        std::error_code ec1, ec2;
        for (const auto& in : inputs)
            if (!in.empty() && fs::weakly_canonical(in, ec1) == fs::weakly_canonical(d.path, ec2) && !ec1 && !ec2)
                refuse(option, path, "a file other than " + in, "the same file (it would be overwritten)");
        return;
    }
    for (const auto& in : inputs) {
        struct stat st {};
        if (!in.empty() && ::stat(in.c_str(), &st) == 0 && st.st_dev == d.dev && st.st_ino == d.ino)
            refuse(option, path, "a file other than the input " + in, "the same file (it would be overwritten)");
    }
}

interrupt_guard::interrupt_guard(const std::string& path) {
    std::error_code ec;
    g_path_existed = !path.empty() && fs::exists(path, ec) ? 1 : 0;
    std::snprintf(g_msg_existing, sizeof g_msg_existing, "): %s left as it was\n", path.c_str());
    std::snprintf(g_msg_new, sizeof g_msg_new, "): %s not created\n", path.c_str());
    g_guard = path.empty() ? 0 : 1;
    acquire();
}

interrupt_guard::~interrupt_guard() {
    g_guard = 0;
    release();
}

void write_file_atomically(const std::string& path, const std::string& text,
                           const std::function<void(const std::string&)>& check) {
    destination d = resolve("", path);
    counted_handler handler;  // a signal mid-write removes the temporary file
    if (d.kind == dest_kind::special || d.kind == dest_kind::stream) {
        if (check) {  // the check sees the text as a file; the device or FIFO gets it only if accepted
            std::string tmp = write_temporary(path, (fs::temp_directory_path() / "mmgp-out.XXXXXX").string(), text);
            try {
                check(tmp);
            } catch (...) {
                discard(tmp);
                throw;
            }
            discard(tmp);
        }
        if (d.kind == dest_kind::stream) {  // where the descriptor points, after what is there
            write_fd(d.fd, path, text);
            return;
        }
        // The descriptor check_output() opened, else one opened now; never blocks on a FIFO nobody reads (ENXIO
        // instead); then blocking writes for the text itself.
        int fd = -1;
        if (auto it = held_open().find({d.dev, d.ino}); it != held_open().end()) {
            fd = it->second;
            held_open().erase(it);
        } else {
            fd = ::open(d.path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        }
        if (fd < 0) fail(path, "a writable file (a FIFO: one that someone reads)", errno);
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        try {
            write_fd(fd, path, text);
        } catch (...) {
            ::close(fd);
            throw;
        }
        ::close(fd);
        return;
    }
    std::string tmp = write_temporary(path, d.path + ".tmp.XXXXXX", text);
    try {
        if (check) check(tmp);
        // A file replaced keeps its permission bits (a read-only 0444 profile stays read-only).
        if (d.exists && ::chmod(tmp.c_str(), d.mode) != 0) fail(path, "a file whose mode can be kept", errno);
        if (std::rename(tmp.c_str(), d.path.c_str()) != 0) fail(path, "a path the file can be renamed to", errno);
    } catch (...) {
        discard(tmp);
        throw;
    }
    g_tmp_live = 0;
    int dfd = ::open(parent_dir(d.path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {  // the rename itself survives a crash
        ::fsync(dfd);
        ::close(dfd);
    }
}

bool create_file_exclusively(const std::string& path, const std::string& text) {
    counted_handler handler;  // a signal before the link removes the temporary file
    const std::string tmp = write_temporary(path, path + ".tmp.XXXXXX", text);
    const bool linked = ::link(tmp.c_str(), path.c_str()) == 0;
    const int err = errno;
    discard(tmp);
    if (!linked && err != EEXIST) fail(path, "a file that can be created", err);
    return linked;
}

interrupt_hold::interrupt_hold() {
    acquire();
    g_in_command = g_in_command + 1;
}

interrupt_hold::~interrupt_hold() {
    g_in_command = g_in_command - 1;
    release();
}

void set_interrupt_hook(interrupt_hook hook) noexcept { g_hook.store(hook); }

int interrupts_handled() noexcept { return g_count; }

sigset_t interrupt_signals() noexcept {
    sigset_t set;
    sigemptyset(&set);
    for (int s : g_signals) sigaddset(&set, s);
    return set;
}

bool interrupt_pending() noexcept { return g_pending != 0; }

void finish_interrupt() {
    if (!g_pending) return;
    die_by(g_pending);
}

}  // namespace mmgp
