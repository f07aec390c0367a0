// The journal of a tune: the file (locked, appended line by line, fsynced, a torn last line cut off) and the
// recorded runs checked and given to the tuner on --resume. Called by mmgp tune (cli/cmd_tune.cpp) and the loop;
// calls the file system. The header's options are the caller's (cli/tune_header.cpp).
#include "tune_journal.hpp"

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <set>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "mmgp/io.hpp"
#include "mmgp/words.hpp"

namespace mmgp::run {

using nlohmann::json;

// --- The file ----------------------------------------------------------------------------------------------------

namespace {

// How long a resume waits for the journal's lock. A tune killed a moment ago can leave it held for a while: a
// child it forked keeps the lock's open file until its exec closes it (O_CLOEXEC), which on a loaded machine
// came after the resume that followed the kill ("locked by another process" from a tune already dead).
constexpr double lock_grace_s = 2.0;

// flock(LOCK_EX) without blocking, tried every 20 ms for `grace_s`: false when another process holds it still.
bool lock_within(int fd, double grace_s) {
    const timespec tick{0, 20'000'000};
    for (double waited = 0;; waited += 0.02) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
        if (errno != EWOULDBLOCK && errno != EINTR) return false;
        if (waited >= grace_s) return false;
        ::nanosleep(&tick, nullptr);
    }
}

}  // namespace

journal::~journal() {
    if (fd_ >= 0) close(fd_);
}

std::vector<json> journal::open(const std::string& path) {
    path_ = path;
    // A journal is a regular file: a FIFO would wait for a writer for ever, a device never holds one.
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
        throw input_error(path, "(file)", "a regular file (an mmgp tune journal)",
                          S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a special file");
    fd_ = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0) throw input_error(path, "(file)", "a journal that can be opened for appending", std::strerror(errno));
    if (!lock_within(fd_, lock_grace_s))
        throw input_error(path, "(lock)", "a journal no other mmgp tune is using", "locked by another process");
    std::string text = read_text_file(path);
    std::vector<json> lines;
    std::size_t pos = 0, good_end = 0;
    int line_no = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        const bool last = nl == std::string::npos || nl + 1 >= text.size();
        std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        ++line_no;
        check_unique_keys(line, path, "line " + std::to_string(line_no) + ", ");
        json j = json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object() || nl == std::string::npos) {
            // Torn: the last line cut by a crash (every line is written whole with its newline, then fsynced).
            // A complete line that is not a run is bad input wherever it stands.
            if (!last || nl != std::string::npos)
                throw input_error(path, "line " + std::to_string(line_no), "one JSON object per line",
                                  "\"" + utf8_prefix(line, 40) + "\"");
            if (lines.empty())
                throw input_error(path, "line 1", "the header of an mmgp tune journal",
                                  "a torn line (an interrupted write) and no complete line");
            torn_warning_ = path + ": line " + std::to_string(line_no) + " is torn (an interrupted write): skipped, the " +
                            std::to_string(lines.size()) + " lines before it kept";
            torn_at_ = static_cast<long long>(good_end);
            break;
        }
        lines.push_back(std::move(j));
        pos = nl + 1;
        good_end = pos;
    }
    return lines;
}

void journal::create(const std::string& path, const json& header) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw input_error(path, "(file)", "a new journal file (--journal names the file, not its folder)", "a directory");
    if (!create_file_exclusively(path, header.dump() + "\n"))
        throw input_error(path, "(file)", "a new journal (--resume " + path + " continues that tune)", "an existing file");
    open(path);
}

void journal::append(const json& j) {
    if (torn_at_ >= 0) {  // the torn line goes only when the journal goes on
        if (ftruncate(fd_, static_cast<off_t>(torn_at_)) != 0)
            throw input_error(path_, "(file)", "a journal that can be truncated", std::strerror(errno));
        torn_at_ = -1;
    }
    std::string line = j.dump() + "\n";
    const char* p = line.data();
    std::size_t left = line.size();
    // A write that fails part-way (a full disk) is cut off again: the journal keeps whole lines only, even when
    // this process lives on (only a kill in between leaves a torn last line, which open() reports and cuts).
    const off_t before = ::lseek(fd_, 0, SEEK_END);
    auto undo = [&](const char* expected) {
        const int err = errno;
        if (before >= 0) (void)!ftruncate(fd_, before);
        throw input_error(path_, "(file)", expected, std::strerror(err));
    };
    while (left > 0) {
        ssize_t w = ::write(fd_, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            undo("a journal that can be written");
        }
        if (w == 0) {
            errno = ENOSPC;
            undo("a journal that can be written");
        }
        p += w;
        left -= static_cast<std::size_t>(w);
    }
    if (fsync(fd_) != 0) undo("a journal that can be synced");
}

// --- The recorded runs -------------------------------------------------------------------------------------------

double past_bound_of(const json& line, bool censored) {
    if (!censored || !line.value("progress_stop", false)) return 0;
    if (line.contains("at_least_s")) return line.at("at_least_s").get<double>();
    return line.contains("bound_s") && line.at("bound_s").is_number() ? line.at("bound_s").get<double>() : 0.0;
}

namespace {

// One run line of a journal, checked as a run the tune recorded itself would be: integer m, p, nodes >= 1 of the
// tune's space, a known policy and outcome, a finite wall time in [0, 1e9] s.
struct journal_line_run {
    long long run_no;    // its run number
    std::size_t config;  // its configuration's index in the tune's space
    measurement::run run;
};
// What a run line is checked against: the tune's space (its configurations' index by key_of, one sharing mode)
// and its short runs' work.
struct tune_space_view {
    std::map<std::string, std::size_t> index;
    accelerator_sharing share = accelerator_sharing::dedicated;
    double short_work = 0;
};
journal_line_run journal_run(const json& j, const std::string& path, const std::string& where,
                             const tune_space_view& space) {
    const auto& index = space.index;
    const double short_work = space.short_work;
    auto fail = [&](const std::string& key, const std::string& expected) {
        throw input_error(path, where + ", /" + key, expected,
                          j.contains(key) ? "the value " + utf8_prefix(j.at(key).dump(), 40) : std::string("nothing"));
    };
    auto count = [&](const char* key) {
        if (!j.contains(key) || !j.at(key).is_number_integer() || j.at(key).get<long long>() < 1 ||
            j.at(key).get<long long>() > 1000000000)
            fail(key, "an integer >= 1");
        return j.at(key).get<long long>();
    };
    configuration c{static_cast<int>(count("m")), static_cast<int>(count("p")), static_cast<int>(count("nodes")),
                    policy::edtlp};
    if (!j.contains("policy") || !j.at("policy").is_string() || !parse_policy(j.at("policy").get<std::string>(), c.pol))
        fail("policy", "edtlp or os");
    const auto it = index.find(key_of(c));
    if (it == index.end()) throw input_error(path, where, "a configuration of the tune's space", config_text(c));
    // A line without the key was written under the tune's mode (a CPU tune writes none).
    if (j.contains("sharing") && !(j.at("sharing").is_string() && j.at("sharing").get<std::string>() == to_string(space.share)))
        fail("sharing", "the tune's sharing mode, \"" + std::string(to_string(space.share)) + "\"");
    static constexpr std::pair<const char*, run_outcome> outcomes[] = {
        {"ok", run_outcome::ok}, {"censored", run_outcome::censored}, {"failed", run_outcome::failed},
        {"cancelled", run_outcome::cancelled}};
    const json* oc = j.contains("outcome") && j.at("outcome").is_string() ? &j.at("outcome") : nullptr;
    const auto known = oc ? std::find_if(std::begin(outcomes), std::end(outcomes),
                                         [&](const auto& x) { return oc->get<std::string>() == x.first; })
                          : std::end(outcomes);
    if (known == std::end(outcomes)) fail("outcome", "ok, censored, failed or cancelled");
    if (!j.contains("wall_s") || !j.at("wall_s").is_number() || !(j.at("wall_s").get<double>() >= 0) ||
        !(j.at("wall_s").get<double>() <= 1e9))
        fail("wall_s", "a wall time in [0, 1000000000] seconds");
    // A finished run ("ok") has a time, as a recorded run must (1e-9 s at least), and its program's exit status 0
    // (once such lines were taken and counted as failed runs).
    if (known->second == run_outcome::ok && !(j.at("wall_s").get<double>() >= 1e-9))
        fail("wall_s", "a finished run's wall time in [0.000000001, 1000000000] seconds");
    if (known->second == run_outcome::ok && j.contains("exit") && !(j.at("exit").is_number_integer() && j.at("exit").get<long long>() == 0))
        fail("exit", "0, a finished run's exit status (\"outcome\": \"ok\")");
    if (!j.contains("run") || !j.at("run").is_number_integer() || j.at("run").get<long long>() < 1)
        fail("run", "a run number, an integer >= 1");
    if (j.contains("censored") && !j.at("censored").is_boolean()) fail("censored", "true or false");
    if (j.contains("censored") && j.at("censored").get<bool>() != (known->second == run_outcome::censored))
        fail("censored", std::string("the outcome's word (") + (known->second == run_outcome::censored ? "true" : "false") + ")");
    if (j.contains("bound_s") && !j.at("bound_s").is_null() &&
        !(j.at("bound_s").is_number() && j.at("bound_s").get<double>() >= 0 && j.at("bound_s").get<double>() <= 1e9))
        fail("bound_s", "null or a bound in [0, 1000000000] seconds");
    if (j.contains("early_bound") && !j.at("early_bound").is_boolean()) fail("early_bound", "true or false");
    if (j.contains("short") && !(j.at("short").is_boolean() && (short_work > 0 || !j.at("short").get<bool>())))
        fail("short", short_work > 0 ? "true or false" : "false (the tune has no --work)");
    const bool early = known->second == run_outcome::censored && j.value("early_bound", false);
    const long long run_no = j.at("run").get<long long>();
    if (j.contains("progress_stop") && !j.at("progress_stop").is_boolean()) fail("progress_stop", "true or false");
    const double work = j.value("short", false) ? short_work : 1.0;
    if (j.contains("at_least_s") &&
        !(j.at("at_least_s").is_number() && j.at("at_least_s").get<double>() > 0 && j.at("at_least_s").get<double>() <= 1e9))
        fail("at_least_s", "a time in (0, 1000000000] seconds");
    const double past_bound = past_bound_of(j, known->second == run_outcome::censored);
    measurement::run run{j.at("wall_s").get<double>(), known->second, early, work, past_bound};
    run.where = where;
    return {run_no, it->second, std::move(run)};
}

}  // namespace

namespace {

// A run line's "retries_failed_before" (written by a session with --retry-failed): the failures numbered below it
// were set aside; 0 where the line has none. At least 1, at most the line's own run number.
long long retries_failed_before(const json& j, const std::string& path, std::size_t line, long long run_no) {
    if (!j.contains("retries_failed_before")) return 0;
    const json& v = j.at("retries_failed_before");
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > run_no)
        throw input_error(path, "line " + std::to_string(line) + ", /retries_failed_before",
                          "a run number in [1, " + std::to_string(run_no) + "] (the line's own run number at most)",
                          "the value " + utf8_prefix(v.dump(), 40));
    return v.get<long long>();
}

// A retry mark, {"mark": "retry_failed", "retries_failed_before": N} (written as a --retry-failed session begins):
// the failures numbered below N set aside; N at most one past the largest run number before it.
long long read_retry_mark(const json& j, const std::string& path, std::size_t line, long long largest_run) {
    const std::string where = "line " + std::to_string(line);
    if (!j.at("mark").is_string() || j.at("mark").get<std::string>() != "retry_failed")
        throw input_error(path, where + ", /mark", "\"retry_failed\" (the one mark a tune writes)",
                          "the value " + utf8_prefix(j.at("mark").dump(), 40));
    for (const auto& [key, value] : j.items())
        if (key != "mark" && key != "retries_failed_before" && key != "start")
            throw input_error(path, where + ", /" + key, "a retry mark's keys (mark, retries_failed_before, start)",
                              "the key " + utf8_prefix(key, 40));
    const json* v = j.contains("retries_failed_before") ? &j.at("retries_failed_before") : nullptr;
    if (!v || !v->is_number_integer() || v->get<long long>() < 1 || v->get<long long>() > largest_run + 1)
        throw input_error(path, where + ", /retries_failed_before",
                          "a run number in [1, " + std::to_string(largest_run + 1) +
                              "] (one past the largest run before the mark at most)",
                          v ? "the value " + utf8_prefix(v->dump(), 40) : std::string("nothing"));
    return v->get<long long>();
}

}  // namespace

json retry_mark_line(int retries_failed_before) {
    return {{"mark", "retry_failed"}, {"retries_failed_before", retries_failed_before}, {"start", utc_now()}};
}

journal_history add_recorded_runs(const std::vector<json>& lines, const std::string& path, tuner& t,
                                  bool skip_failed) {
    tune_space_view space;
    for (std::size_t i = 0; i < t.space().size(); ++i) space.index[key_of(t.space()[i])] = i;
    if (!t.space().empty()) space.share = t.space().front().share;
    space.short_work = t.options().short_work;
    std::set<long long> run_numbers;
    std::vector<journal_line_run> runs;
    long long retried_before = 0;  // the failures numbered below it were set aside by a session that retried them
    long long largest_run = 0;
    for (std::size_t ln = 1; ln < lines.size(); ++ln) {
        if (lines[ln].is_object() && lines[ln].contains("mark")) {
            retried_before = std::max(retried_before, read_retry_mark(lines[ln], path, ln + 1, largest_run));
            continue;
        }
        runs.push_back(journal_run(lines[ln], path, "line " + std::to_string(ln + 1), space));
        const long long run_no = runs.back().run_no;
        largest_run = std::max(largest_run, run_no);
        if (!run_numbers.insert(run_no).second)
            throw input_error(path, "line " + std::to_string(ln + 1) + ", /run",
                              "each run recorded once (a run counted twice would weigh twice)",
                              fmt::format("run {} again", run_no));
        retried_before = std::max(retried_before, retries_failed_before(lines[ln], path, ln + 1, run_no));
    }
    journal_history h;
    for (journal_line_run& x : runs) {
        h.recorded.emplace_back(x.config, x.run.work < 1);
        const bool failed = x.run.outcome == run_outcome::failed;
        if (failed && skip_failed && x.run_no >= retried_before) ++h.failures_set_aside;
        if (!(failed && (skip_failed || x.run_no < retried_before))) t.add(x.config, std::move(x.run));
    }
    for (std::size_t ln = 1; ln < lines.size(); ++ln) {
        h.next_run_number = std::max(h.next_run_number, lines[ln].value("run", 0) + 1);
        const std::string oc = lines[ln].value("outcome", std::string());
        h.any_ran = h.any_ran || oc == "ok" || oc == "censored";
    }
    if (skip_failed) h.retry_failed_before = h.next_run_number;
    return h;
}

}  // namespace mmgp::run
